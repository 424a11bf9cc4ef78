-- The stored answers of a finished table's requests (action_requests, most of
-- a game's storage) are only there for retries, which come within seconds: they
-- are deleted an hour after the table finished, long before the table and its
-- event log. `answers_kept` marks the tables whose answers are still stored;
-- the partial index lets the purge find the oldest of them without scanning.

ALTER TABLE tables ADD COLUMN answers_kept boolean NOT NULL DEFAULT true;

CREATE INDEX tables_answers_kept_idx ON tables (finished_at)
    WHERE status = 'finished' AND answers_kept;
