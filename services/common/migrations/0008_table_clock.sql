-- The tables' clock as every game replica's sweeper sees it: each marks the
-- time it last reached the database (`beat_at`, about every second). A gap
-- between two marks longer than a few seconds means nobody could reach it (the
-- database, or every replica, was out) and no move could be made: the last two
-- such gaps are kept, and the turns in play then get their time back (`Resume`).

CREATE TABLE table_clock (
    id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    beat_at timestamptz,
    stopped_at timestamptz,
    restarted_at timestamptz,
    prev_stopped_at timestamptz,
    prev_restarted_at timestamptz
);

INSERT INTO table_clock (id) VALUES (1);
