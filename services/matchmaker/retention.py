"""Retention of the matchmaker's rows: tickets and matches that ended long ago
(`run`, the replica's purge loop). Live rows are never touched: only ended
tickets (cancelled, expired, matched) have ended_at, and only settled matches
(created, failed) have done_at. Deletes run in bounded batches
(`purge_in_batches`): every replica may purge at once, each row goes once."""

from __future__ import annotations

import asyncio

import asyncpg
import structlog

from services.common.db import Pool, purge_in_batches
from services.common.db.purge import DEFAULT_BATCH
from services.common.errors import DB_ERRORS

log = structlog.get_logger(__name__)

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


async def purge_matchmaking(
    pool: Pool, *, older_than_s: float, batch: int = DEFAULT_BATCH
) -> tuple[int, int]:
    """Delete tickets and matches that ended more than `older_than_s` ago;
    return (tickets, matches) deleted."""
    tickets = await purge_in_batches(pool, _PURGE_TICKETS, older_than_s=older_than_s, batch=batch)
    matches = await purge_in_batches(pool, _PURGE_MATCHES, older_than_s=older_than_s, batch=batch)
    return tickets, matches


async def run(pool: Pool, *, keep_days: int, interval_s: float) -> None:
    """Until cancelled, every ``interval_s``: delete tickets and matches that ended
    more than ``keep_days`` ago (0: kept forever, and nothing runs)."""
    if keep_days <= 0:
        return
    while True:
        try:
            tickets, matches = await purge_matchmaking(pool, older_than_s=keep_days * 86_400.0)
            if tickets or matches:
                log.info("retention_purged", tickets=tickets, matches=matches)
        except (*DB_ERRORS, asyncpg.PostgresError) as error:
            log.warning("retention_failed", error=str(error))
        await asyncio.sleep(interval_s)
