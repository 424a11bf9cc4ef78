-- Retention: finished tables (with their event logs, seats and request
-- outcomes, by cascade) and ended matchmaking rows are deleted once older than
-- RUMMY_EVENT_RETENTION_DAYS. These partial indexes let the purge find the
-- oldest of them without scanning live rows.

CREATE INDEX tables_finished_at_idx ON tables (finished_at) WHERE status = 'finished';

CREATE INDEX tickets_ended_at_idx ON tickets (ended_at) WHERE ended_at IS NOT NULL;

CREATE INDEX matches_done_at_idx ON matches (done_at) WHERE done_at IS NOT NULL;
