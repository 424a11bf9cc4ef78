-- Players, game tables and their append-only event logs.
-- Tables are stateless actors over these rows (see DESIGN.md): one action is
-- one transaction that locks `tables`, checks `action_requests`, writes the
-- new state and appends to `table_events`.

CREATE TABLE players (
    id           text PRIMARY KEY,
    -- NULL for players who never logged in with a device id; several NULLs are
    -- allowed by a unique constraint, two equal device ids are not.
    device_id    text UNIQUE,
    display_name text NOT NULL DEFAULT '',
    rating       double precision NOT NULL DEFAULT 1500,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tables (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    ruleset       text NOT NULL,
    options       jsonb NOT NULL DEFAULT '{}'::jsonb,
    -- Serialised rules-engine state; opaque to SQL.
    state         bytea NOT NULL,
    -- Bumped by every applied action: lets a cache or a client detect staleness.
    version       bigint NOT NULL DEFAULT 0,
    -- seq of the newest row in table_events; the next event gets last_seq + 1.
    last_seq      bigint NOT NULL DEFAULT 0,
    status        text NOT NULL DEFAULT 'active',
    -- Seats the server plays itself (bots): their turns are due after a short delay.
    bot_seats     smallint[] NOT NULL DEFAULT '{}',
    -- When the current turn times out, or a bot's turn is due.
    turn_deadline timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    CONSTRAINT tables_status_check CHECK (status IN ('active', 'finished')),
    CONSTRAINT tables_finished_at_check CHECK ((status = 'finished') = (finished_at IS NOT NULL))
);

-- The timeout sweeper's query: expired turns of live tables, oldest first.
-- Partial, so finished tables (the vast majority over time) cost nothing.
CREATE INDEX tables_turn_deadline_idx ON tables (turn_deadline)
    WHERE status = 'active' AND turn_deadline IS NOT NULL;

CREATE TABLE table_seats (
    table_id     uuid NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    seat         smallint NOT NULL,
    -- No foreign key to players: bots sit at tables without being players.
    player_id    text NOT NULL,
    -- Copied at seating: the table shows the name the player had when it began.
    display_name text NOT NULL DEFAULT '',
    is_bot       boolean NOT NULL DEFAULT false,
    left_at      timestamptz,
    PRIMARY KEY (table_id, seat),
    CONSTRAINT table_seats_seat_check CHECK (seat >= 0 AND seat < 4)
);

-- "Which tables is this player at?" (reconnects, one game per player checks).
CREATE INDEX table_seats_player_id_idx ON table_seats (player_id);

CREATE TABLE table_events (
    table_id   uuid NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    -- Per-table sequence, assigned under the table's row lock; Watch resumes from it.
    seq        bigint NOT NULL,
    -- The table version whose action produced this event.
    version    bigint NOT NULL,
    kind       text NOT NULL,
    payload    bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, seq)
);

-- The log is append-only: an event, once streamed, must never change, or a
-- replay would differ from what clients saw. Deleting stays possible so that
-- old finished tables can be purged (their events go with them by cascade).
CREATE FUNCTION table_events_forbid_update() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'table_events is append-only'
        USING ERRCODE = 'object_not_in_prerequisite_state';
END
$$;

CREATE TRIGGER table_events_append_only
    BEFORE UPDATE ON table_events
    FOR EACH ROW EXECUTE FUNCTION table_events_forbid_update();

-- Idempotent retries: the outcome of each (table, player, request id) is
-- stored in the action's transaction and replayed if the request comes again:
-- the response of an accepted action, or the error of a refused one.
CREATE TABLE action_requests (
    table_id   uuid NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
    player_id  text NOT NULL,
    request_id text NOT NULL,
    response   bytea,
    error      jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, player_id, request_id),
    CONSTRAINT action_requests_answer_check CHECK ((response IS NULL) <> (error IS NULL))
);
