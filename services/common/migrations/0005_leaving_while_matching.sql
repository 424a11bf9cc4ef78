-- A player who leaves the queue (Cancel, or a closed stream) while their table
-- is being set up cannot be taken off it: the table may already exist. The wish
-- is kept instead, so that if the table cannot be made after all, their ticket
-- ends cancelled rather than going back to the queue with nobody waiting on it.

ALTER TABLE tickets ADD COLUMN leave_requested boolean NOT NULL DEFAULT false;
