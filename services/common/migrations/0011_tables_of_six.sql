-- Tables of 5 or 6 players (classic and contract, at private tables): a table
-- has up to 6 seats, and a ticket may ask for up to 6. Quick-match queues still
-- seat 2 to 4; the matchmaker checks that, and the game service each rule
-- set's own number of players.

ALTER TABLE table_seats DROP CONSTRAINT table_seats_seat_check;
ALTER TABLE table_seats ADD CONSTRAINT table_seats_seat_check CHECK (seat >= 0 AND seat < 6);

ALTER TABLE tickets DROP CONSTRAINT tickets_size_check;
ALTER TABLE tickets ADD CONSTRAINT tickets_size_check CHECK (table_size BETWEEN 2 AND 6);
