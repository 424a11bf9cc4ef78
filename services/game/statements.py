"""The SQL of the tables: reading, creating, committing and sweeping them.

Every statement names its parameters (`Statement`). A statement whose row holds
``now_ms`` reads the database's clock: each such row is a sample for a
replica's estimate of that clock (`DbClock`). The turns' clock stops have their
SQL in `clockstop`, retention in `retention`, presence in `presence`."""

from __future__ import annotations

from services.common.db import Statement

from .clockstop import CLOCK_MARKED, CLOCK_STOPS

NOW_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms"

# --- reading a table -----------------------------------------------------------

READ = Statement(
    "SELECT t.state, t.version, t.last_seq, t.bot_seats, t.bot_level, t.status,"
    f" t.connected_seats, {NOW_MS}, r.response, r.error, r.digest,"
    " s.players, s.names, s.bots"
    " FROM tables t LEFT JOIN LATERAL (SELECT response, error, digest FROM action_requests"
    " WHERE table_id = t.id AND player_id = :player_id AND request_id = :request_id) AS r"
    " ON true LEFT JOIN LATERAL (SELECT array_agg(player_id ORDER BY seat) AS players,"
    " array_agg(display_name ORDER BY seat) AS names, array_agg(is_bot ORDER BY seat) AS bots"
    " FROM table_seats WHERE table_id = t.id) AS s ON true"
    " WHERE t.id = :table_id"
)
"""A move's read: the table, the seats, and what is kept for the request id (its
answer, or its refusal)."""

LOAD = Statement(
    "SELECT CASE WHEN version = :kept_version THEN NULL ELSE state END AS state, version,"
    f" last_seq, bot_seats, connected_seats, {NOW_MS} FROM tables WHERE id = :table_id"
)
"""The table as it is now, to show it: its state only if this replica does not
keep it at that version already (``kept_version``; -1 when it keeps none)."""

SEATS = Statement(
    "SELECT s.seat, s.player_id, s.display_name, s.is_bot, t.bot_level"
    " FROM table_seats s JOIN tables t ON t.id = s.table_id WHERE s.table_id = :table_id"
)
"""The seats, each bot with the table's level."""

CLOCK = Statement(
    f"SELECT {NOW_MS}, t.version FROM (SELECT 1) AS one LEFT JOIN tables t ON t.id = :table_id"
)
"""The database's clock, and the table's version if it exists."""

# --- creating a table ----------------------------------------------------------

CREATE = Statement(
    "WITH made AS (INSERT INTO tables (id, ruleset, options, state, version, last_seq,"
    " turn_deadline, bot_seats, bot_level) VALUES (:table_id, :ruleset, :options::jsonb,"
    " :state, 1, :last_seq, :turn_deadline, :bot_seats, :bot_level)"
    " ON CONFLICT (id) DO NOTHING RETURNING id),"
    " seated AS (INSERT INTO table_seats (table_id, seat, player_id, display_name, is_bot)"
    " SELECT :table_id, s - 1, p, n, b FROM made,"
    " unnest(:player_ids::text[], :names::text[], :is_bot::boolean[])"
    " WITH ORDINALITY AS x(p, n, b, s)),"
    " logged AS (INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
    " SELECT :table_id, s, 1, k, p, :at FROM made,"
    " unnest(:seqs::bigint[], :kinds::text[], :payloads::bytea[]) AS e(s, k, p))"
    f" SELECT count(*) AS made, {NOW_MS} FROM made"
)
"""One statement: the table, its seats and its first events (unless the id is taken)."""

MADE = Statement(
    "SELECT ruleset, options::text AS options, (SELECT max(seq) FROM table_events"
    " WHERE table_id = :table_id AND version = 1) AS first_seq FROM tables WHERE id = :table_id"
)
"""What a create stored, to tell a retry of it from another table under its id."""

# --- committing a change ---------------------------------------------------------

WRITE = Statement(
    "WITH moved AS (UPDATE tables SET state = :state, version = :version,"
    " last_seq = :last_seq, turn_deadline = :turn_deadline, status = :status,"
    " updated_at = now(), finished_at = CASE WHEN :status = 'finished' THEN now() END"
    " WHERE id = :table_id AND version = :version - 1"
    " AND last_seq = :last_seq - cardinality(:seqs::bigint[]) AND status = 'active'"
    " RETURNING id),"
    " logged AS (INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
    " SELECT :table_id, s, :version, k, p, :at FROM moved,"
    " unnest(:seqs::bigint[], :kinds::text[], :payloads::bytea[]) AS e(s, k, p)),"
    " answered AS (INSERT INTO action_requests"
    " (table_id, player_id, request_id, response, digest)"
    " SELECT :table_id, :player_id, :request_id, :answer, :digest FROM moved"
    " WHERE :request_id <> ''),"
    " gone AS (UPDATE table_seats SET left_at = now() FROM moved"
    " WHERE table_seats.table_id = :table_id AND seat = ANY(:gone::int[]) AND left_at IS NULL)"
    f" SELECT count(*) AS moved, {NOW_MS} FROM moved"
)
"""Every change of a table, in one statement (`store`'s commit protocol): the state
and version, only if the version and last seq are still the ones judged from (a
`presence` event takes a seq, never a version) and the game is on; the events it
caused; the request's answer; and the seats that left or were eliminated, which
are then free to play elsewhere. ``moved`` says whether it wrote anything."""

REMEMBER_REFUSAL = Statement(
    "INSERT INTO action_requests (table_id, player_id, request_id, error, digest)"
    " VALUES (:table_id, :player_id, :request_id, :error::jsonb, :digest)"
    " ON CONFLICT DO NOTHING RETURNING true"
)

# --- the sweeper -------------------------------------------------------------------

DB_NOW = "(SELECT clock_timestamp())"
"""The database's clock, read once per statement: a bare clock_timestamp() (volatile)
cannot bound an index scan, and a sweep would read every active table's deadline."""

COUNT_DUE = Statement(
    "SELECT count(*)::int FROM (SELECT 1 FROM tables WHERE status = 'active'"
    f" AND turn_deadline <= {DB_NOW} LIMIT :most) AS d"
)
"""The sweeper's probe: how many turns are due (at most ``most``)."""

CLAIM_DUE = Statement(
    "SELECT t.id, t.state, t.version, t.last_seq, t.bot_seats, t.bot_level,"
    f" t.connected_seats, {NOW_MS}, {CLOCK_STOPS} AS stops"
    f" FROM tables t WHERE t.status = 'active' AND t.turn_deadline <= {DB_NOW}"
    f" AND {CLOCK_MARKED} ORDER BY t.turn_deadline LIMIT 1 FOR UPDATE OF t SKIP LOCKED"
)
"""The oldest due turn, claimed (others' claims are skipped), with the clock's last
two stops; none, and no table read, while the turns' clock may be stopped
(`clockstop`)."""

SET_DEADLINE = Statement("UPDATE tables SET turn_deadline = :turn_deadline WHERE id = :table_id")

PUT_OFF = Statement(
    "UPDATE tables SET turn_deadline = clock_timestamp() + make_interval(secs => :delay_s)"
    " WHERE id = :table_id AND version = :version AND status = 'active'"
)
"""A due turn that failed to fire, moved on by ``delay_s``: only if nobody moved the
table meanwhile (the claim's lock is gone)."""
