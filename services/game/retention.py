"""Retention: delete finished tables and ended matchmaking rows past their age.

A finished table goes with its event log, seats and stored request outcomes
(ON DELETE CASCADE). The stored outcomes go much sooner: they only answer
retries, which come within seconds, and are most of a finished game's bytes.
Deletes run in bounded batches, each its own short transaction, and claim rows
with FOR UPDATE SKIP LOCKED: every replica may purge at the same time, none
waits on another, and each row is deleted once.
"""

from __future__ import annotations

from services.common.db import Connection, Pool

DEFAULT_BATCH = 500
ANSWER_RETENTION_S = 3600.0
"""How long after its table finished a request's stored answer is kept."""

_PURGE_TABLES = """
DELETE FROM tables WHERE id IN (
    SELECT id FROM tables
    WHERE status = 'finished' AND finished_at < now() - make_interval(secs => $1)
    ORDER BY finished_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
"""

_PURGE_ANSWERS = """
WITH done AS (
    SELECT id FROM tables
    WHERE status = 'finished' AND answers_kept
      AND finished_at < now() - make_interval(secs => $1)
    ORDER BY finished_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM action_requests r USING done WHERE r.table_id = done.id
)
UPDATE tables t SET answers_kept = false FROM done WHERE t.id = done.id
"""

# Only ended tickets (cancelled, expired, matched) have ended_at; only settled
# matches (created, failed) have done_at: live rows are never touched.
_PURGE_TICKETS = """
DELETE FROM tickets WHERE id IN (
    SELECT id FROM tickets
    WHERE ended_at IS NOT NULL AND ended_at < now() - make_interval(secs => $1)
    ORDER BY ended_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
"""

_PURGE_MATCHES = """
DELETE FROM matches WHERE table_id IN (
    SELECT table_id FROM matches
    WHERE done_at IS NOT NULL AND done_at < now() - make_interval(secs => $1)
    ORDER BY done_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
)
"""


async def _batched(pool: Connection | Pool, sql: str, older_than_s: float, batch: int) -> int:
    if batch < 1:
        raise ValueError("batch must be at least 1")
    total = 0
    while True:
        status = await pool.execute(sql, float(older_than_s), batch)
        deleted = int(status.rpartition(" ")[2])
        total += deleted
        # A short batch: nothing old is left, or what is left is locked by
        # another purger (SKIP LOCKED), which deletes it itself.
        if deleted < batch:
            return total


async def purge_finished(pool: Pool, *, older_than_s: float, batch: int = DEFAULT_BATCH) -> int:
    """Delete tables finished more than `older_than_s` ago; return how many."""
    return await _batched(pool, _PURGE_TABLES, older_than_s, batch)


async def purge_answers(
    pool: Connection | Pool, *, older_than_s: float = ANSWER_RETENTION_S, batch: int = DEFAULT_BATCH
) -> int:
    """Delete the stored request answers of tables finished more than
    `older_than_s` ago (the tables stay); return how many tables were cleared."""
    return await _batched(pool, _PURGE_ANSWERS, older_than_s, batch)


async def purge_matchmaking(
    pool: Pool, *, older_than_s: float, batch: int = DEFAULT_BATCH
) -> tuple[int, int]:
    """Delete tickets and matches that ended more than `older_than_s` ago;
    return (tickets, matches) deleted."""
    tickets = await _batched(pool, _PURGE_TICKETS, older_than_s, batch)
    matches = await _batched(pool, _PURGE_MATCHES, older_than_s, batch)
    return tickets, matches
