-- Matchmaking: tickets queue for tables; a match is recorded before the game
-- service is asked to create its table, so a replica dying half-way leaves a
-- durable intent that any replica completes (the create call is idempotent).

CREATE TABLE tickets (
    id                 uuid PRIMARY KEY,
    player_id          text NOT NULL,
    display_name       text NOT NULL DEFAULT '',
    table_size         smallint NOT NULL,
    ruleset            text NOT NULL,
    options            jsonb NOT NULL,
    -- Tickets match only within one family: same rule set, options and mode,
    -- or the same invite code for a private table.
    family             text NOT NULL,
    mode               text NOT NULL DEFAULT 'fifo',
    rating             double precision NOT NULL DEFAULT 1500,
    invite_code        text,
    is_host            boolean NOT NULL DEFAULT false,
    accept_smaller_ms  integer NOT NULL DEFAULT 0,
    fill_bots_ms       integer NOT NULL DEFAULT 0,
    state              text NOT NULL DEFAULT 'queued',
    end_message        text NOT NULL DEFAULT '',
    table_id           uuid,
    seat               smallint,
    seated             smallint,
    created_at         timestamptz NOT NULL DEFAULT now(),
    expires_at         timestamptz NOT NULL,
    ended_at           timestamptz,
    CONSTRAINT tickets_size_check CHECK (table_size BETWEEN 2 AND 4),
    CONSTRAINT tickets_state_check
        CHECK (state IN ('queued', 'matching', 'matched', 'cancelled', 'expired'))
);

-- One live ticket per player, enforced by the database, whatever the replicas do.
CREATE UNIQUE INDEX tickets_one_live_idx ON tickets (player_id)
    WHERE state IN ('queued', 'matching');

-- The matching loop's scan: queued tickets, oldest first.
CREATE INDEX tickets_queued_idx ON tickets (created_at) WHERE state = 'queued';

CREATE INDEX tickets_invite_idx ON tickets (invite_code) WHERE invite_code IS NOT NULL;

CREATE TABLE matches (
    table_id   uuid PRIMARY KEY,
    -- The CreateTable request, kept so that any replica can repeat it.
    request    bytea NOT NULL,
    state      text NOT NULL DEFAULT 'creating',
    created_at timestamptz NOT NULL DEFAULT now(),
    done_at    timestamptz,
    CONSTRAINT matches_state_check CHECK (state IN ('creating', 'created', 'failed'))
);

CREATE INDEX matches_creating_idx ON matches (created_at) WHERE state = 'creating';
