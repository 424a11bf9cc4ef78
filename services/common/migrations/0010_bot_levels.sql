-- Bot levels: the table's bots play at the level the person who asked for them
-- chose (easy, normal, strong). Tables made before levels keep their bots'
-- play (strong: the greedy bot); a ticket's level goes to the training table
-- it asks for. A constant default rewrites no row, and the checks are added NOT
-- VALID (every row holds the default already), so no table is scanned under
-- the lock: new and changed rows are checked all the same.

ALTER TABLE tables ADD COLUMN bot_level text NOT NULL DEFAULT 'strong';
ALTER TABLE tables ADD CONSTRAINT tables_bot_level_check
    CHECK (bot_level IN ('easy', 'normal', 'strong')) NOT VALID;

ALTER TABLE tickets ADD COLUMN bot_level text NOT NULL DEFAULT 'normal';
ALTER TABLE tickets ADD CONSTRAINT tickets_bot_level_check
    CHECK (bot_level IN ('easy', 'normal', 'strong')) NOT VALID;
