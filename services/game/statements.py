"""The SQL of the table actors: reading, creating, moving and sweeping tables.

A statement whose row holds ``now_ms`` reads the database's clock: each such
row is a sample for a replica's estimate of that clock (`DbClock`)."""

from __future__ import annotations

# --- reading a table -----------------------------------------------------------

READ = (
    "SELECT t.state, t.version, t.last_seq, t.bot_seats, t.bot_level, t.status,"
    " t.connected_seats,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms,"
    " r.request_id AS kept_as, r.response, r.error, r.digest, s.players, s.names, s.bots"
    " FROM tables t LEFT JOIN LATERAL (SELECT request_id, response, error, digest"
    " FROM action_requests WHERE table_id = t.id AND player_id = $2"
    " AND request_id IN ($3, $4) ORDER BY request_id = $3 DESC LIMIT 1) AS r ON true"
    " LEFT JOIN LATERAL (SELECT array_agg(player_id ORDER BY seat) AS players,"
    " array_agg(display_name ORDER BY seat) AS names, array_agg(is_bot ORDER BY seat) AS bots"
    " FROM table_seats WHERE table_id = t.id) AS s ON true"
    " WHERE t.id = $1"
)
"""A move's read: the table, the stored answer of its request id, and the seats.
$4 is the id as builds before ids were the player's for any call kept it
("Discard:<id>"): a retry across an upgrade still finds its first answer."""

LOAD = (
    "SELECT state, version, last_seq, bot_seats, connected_seats,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms"
    " FROM tables WHERE id = $1"
)
"""The table as it is now, to show it."""

SEATS = (
    "SELECT s.seat, s.player_id, s.display_name, s.is_bot, t.bot_level"
    " FROM table_seats s JOIN tables t ON t.id = s.table_id WHERE s.table_id = $1"
)
"""The seats, each bot with the table's level."""

CLOCK = (
    "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms,"
    " t.version, t.last_seq FROM (SELECT 1) AS one LEFT JOIN tables t ON t.id = $1"
)
"""The database's clock, and the table's version and last seq if it exists."""

# --- creating a table ----------------------------------------------------------

CREATE = (
    "WITH made AS (INSERT INTO tables (id, ruleset, options, state, version, last_seq,"
    " turn_deadline, bot_seats, bot_level) VALUES ($1, $2, $3::jsonb, $4, 1, $6, $5, $7, $15)"
    " ON CONFLICT (id) DO NOTHING RETURNING id),"
    " seated AS (INSERT INTO table_seats (table_id, seat, player_id, display_name, is_bot)"
    " SELECT $1, s - 1, p, n, b FROM made,"
    " unnest($8::text[], $9::text[], $10::boolean[]) WITH ORDINALITY AS x(p, n, b, s)),"
    " logged AS (INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
    " SELECT $1, s, 1, k, p, $14 FROM made,"
    " unnest($11::bigint[], $12::text[], $13::bytea[]) AS e(s, k, p))"
    " SELECT count(*) AS made,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms FROM made"
)
"""One statement: the table, its seats and its first events (unless the id is taken)."""

MADE = (
    "SELECT ruleset, options::text AS options, (SELECT max(seq) FROM table_events"
    " WHERE table_id = $1 AND version = 1) AS first_seq FROM tables WHERE id = $1"
)
"""What a create stored, to tell a retry of it from another table under its id."""

# --- a player's move -------------------------------------------------------------

COMPARE_AND_SET = (
    "WITH moved AS (UPDATE tables SET state = $2, version = $3, last_seq = $4,"
    " turn_deadline = $5, updated_at = now() WHERE id = $1 AND version = $3 - 1"
    " AND last_seq = $4 - cardinality($7::bigint[]) AND status = 'active' RETURNING id),"
    " logged AS (INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
    " SELECT $1, s, $3, k, p, $6 FROM moved,"
    " unnest($7::bigint[], $8::text[], $9::bytea[]) AS e(s, k, p)),"
    " answered AS (INSERT INTO action_requests"
    " (table_id, player_id, request_id, response, digest)"
    " SELECT $1, $10, $11, $12, $13 FROM moved WHERE $11 <> ''),"
    " gone AS (UPDATE table_seats SET left_at = now() FROM moved"
    " WHERE table_seats.table_id = $1 AND seat = ANY($14::int[]) AND left_at IS NULL)"
    " SELECT count(*) AS moved,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms FROM moved"
)
"""A move in one statement: the state and version (only if the version and last seq
are still the ones judged from: a `presence` event takes a seq, never a version),
the events it caused, the request's answer, and the seats the
move eliminated, which are then free to play elsewhere."""

REMEMBER_REFUSAL = (
    "INSERT INTO action_requests (table_id, player_id, request_id, error, digest)"
    " VALUES ($1, $2, $3, $4::jsonb, $5) ON CONFLICT DO NOTHING RETURNING true"
)

LOCK = (
    "SELECT state, version, last_seq, bot_seats, connected_seats,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms"
    " FROM tables WHERE id = $1 FOR UPDATE"
)
"""The table's row, locked for a move that changes other rows too."""

LEAVE_SEAT = "UPDATE table_seats SET left_at = now() WHERE table_id = $1 AND seat = $2"

REMEMBER_ANSWER = (
    "INSERT INTO action_requests (table_id, player_id, request_id, response, digest)"
    " VALUES ($1, $2, $3, $4, $5)"
)

WRITE_LOCKED = (
    "WITH moved AS (UPDATE tables SET state = $2, version = $3, last_seq = $4,"
    " turn_deadline = $5, status = $6, updated_at = now(),"
    " finished_at = CASE WHEN $6 = 'finished' THEN now() END WHERE id = $1),"
    " gone AS (UPDATE table_seats SET left_at = now()"
    " WHERE table_id = $1 AND seat = ANY($11::int[]) AND left_at IS NULL)"
    " INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
    " SELECT $1, s, $3, k, p, $10 FROM unnest($7::bigint[], $8::text[], $9::bytea[])"
    " AS e(s, k, p)"
)
"""A move under the row lock, in one statement: the new state, the events it caused
and the seats it eliminated."""

PLAYER_RATINGS = (
    "SELECT id, ARRAY[rating, rating_deviation] AS rating FROM players"
    " WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE"
)
"""Each player's rating as the pair `services.common.rating` takes: mean and
deviation. Locked until the game's commit, in one order: two games a player ends
at once (one they left, one they sat down at since) update the rating one after
the other, the second from the first's result, and never deadlock on each other."""

SET_RATING = (
    "UPDATE players SET rating = ($2::float8[])[1], rating_deviation = ($2::float8[])[2]"
    " WHERE id = $1"
)
"""A rating as `services.common.rating` gives it: the pair mean, deviation."""

# --- the sweeper -------------------------------------------------------------------

DB_NOW = "(SELECT clock_timestamp())"
"""The database's clock, read once per statement: a bare clock_timestamp() (volatile)
cannot bound an index scan, and a sweep would read every active table's deadline."""

COUNT_DUE = (
    "SELECT count(*)::int FROM (SELECT 1 FROM tables WHERE status = 'active'"
    f" AND turn_deadline <= {DB_NOW} LIMIT $1) AS d"
)
"""The sweeper's probe: how many turns are due (at most $1)."""


def _ms(column: str) -> str:
    return f"(extract(epoch from {column}) * 1000)::bigint"


CLAIM_DUE = (
    "SELECT t.id, t.state, t.version, t.last_seq, t.bot_seats, t.bot_level,"
    " t.connected_seats,"
    f" {_ms('clock_timestamp()')} AS now_ms,"
    f" (SELECT ARRAY[{_ms('prev_stopped_at')}, {_ms('prev_restarted_at')},"
    f" {_ms('stopped_at')}, {_ms('restarted_at')}] FROM table_clock WHERE id = 1) AS stops"
    f" FROM tables t WHERE t.status = 'active' AND t.turn_deadline <= {DB_NOW}"
    " AND (SELECT beat_at FROM table_clock WHERE id = 1)"
    f" > {DB_NOW} - make_interval(secs => $1)"
    " ORDER BY t.turn_deadline LIMIT 1 FOR UPDATE OF t SKIP LOCKED"
)
"""The oldest due turn, claimed (others' claims are skipped), with the clock's last
two stops (ms: the one before the last from and to, then the last); none, and no
table read, while no replica has marked the clock for $1 seconds (`clockstop`)."""

SET_DEADLINE = "UPDATE tables SET turn_deadline = $2 WHERE id = $1"

BEAT = (
    "WITH last AS (SELECT beat_at, clock_timestamp() AS now_at"
    " FROM table_clock WHERE id = 1 FOR UPDATE),"
    " gap AS (SELECT *, beat_at < now_at - make_interval(secs => $1) AS new FROM last)"
    " UPDATE table_clock c SET beat_at = GREATEST(g.beat_at, g.now_at),"
    " prev_stopped_at = CASE WHEN g.new THEN c.stopped_at ELSE c.prev_stopped_at END,"
    " prev_restarted_at = CASE WHEN g.new THEN c.restarted_at ELSE c.prev_restarted_at END,"
    " stopped_at = CASE WHEN g.new THEN g.beat_at ELSE c.stopped_at END,"
    " restarted_at = CASE WHEN g.new THEN g.now_at ELSE c.restarted_at END"
    " FROM gap g WHERE c.id = 1"
    f" RETURNING c.stopped_at, {_ms('c.stopped_at')} AS stopped_ms,"
    f" {_ms('c.restarted_at')} AS restarted_ms, g.new IS TRUE AS new"
)
"""A replica's mark that it reached the database (`clockstop`). When nobody has
for more than $1 seconds, the gap is recorded as the clock's last stop, the one
before it kept too. Holds the clock's row for this one statement only."""

REARM = (
    "UPDATE tables SET turn_deadline = now() WHERE id IN (SELECT id FROM tables"
    " WHERE status = 'active' AND turn_deadline > $1 FOR UPDATE SKIP LOCKED)"
)
"""Every turn in play when the clock stopped ($1), due at once: the sweeper gives
it its time back (`Resume`) without waiting for its old deadline to come round.
A table locked meanwhile is left alone: it gets its time back when it falls due."""

PUT_OFF = (
    "UPDATE tables SET turn_deadline = clock_timestamp() + make_interval(secs => $3)"
    " WHERE id = $1 AND version = $2 AND status = 'active'"
)
"""A due turn that failed to fire, moved $3 seconds on: only if nobody moved the
table meanwhile (the claim's lock is gone)."""
