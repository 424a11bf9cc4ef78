"""Retention: delete finished tables past their age, and their stored request
answers much sooner (`run`, the replica's purge loop).

A finished table goes with its event log, seats and stored request outcomes
(ON DELETE CASCADE). The stored outcomes go much sooner: they only answer
retries, which come within seconds, and are most of a finished game's bytes.
Deletes run in bounded batches (`purge_in_batches`): every replica may purge at
the same time, none waits on another, and each row is deleted once. The
matchmaker purges its own rows (`services.matchmaker.retention`).
"""

from __future__ import annotations

import asyncio

import asyncpg
import structlog

from services.common.db import Connection, Pool, purge_in_batches
from services.common.db.purge import DEFAULT_BATCH
from services.common.errors import DB_ERRORS

ANSWER_RETENTION_S = 3600.0
"""How long after its table finished a request's stored answer is kept."""

log = structlog.get_logger(__name__)

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


async def purge_finished(pool: Pool, *, older_than_s: float, batch: int = DEFAULT_BATCH) -> int:
    """Delete tables finished more than `older_than_s` ago; return how many."""
    return await purge_in_batches(pool, _PURGE_TABLES, older_than_s=older_than_s, batch=batch)


async def purge_answers(
    pool: Connection | Pool, *, older_than_s: float = ANSWER_RETENTION_S, batch: int = DEFAULT_BATCH
) -> int:
    """Delete the stored request answers of tables finished more than
    `older_than_s` ago (the tables stay); return how many tables were cleared."""
    return await purge_in_batches(pool, _PURGE_ANSWERS, older_than_s=older_than_s, batch=batch)


async def run(pool: Pool, *, keep_days: int, answer_retention_s: float, interval_s: float) -> None:
    """Until cancelled, every ``interval_s``: delete finished tables' request
    answers, and finished tables older than ``keep_days`` (0: kept forever)."""
    while True:
        try:
            answers = await purge_answers(pool, older_than_s=answer_retention_s)
            tables = 0
            if keep_days > 0:
                tables = await purge_finished(pool, older_than_s=keep_days * 86_400.0)
            if answers or tables:
                log.info("retention_purged", answers_of_tables=answers, tables=tables)
        except (*DB_ERRORS, asyncpg.PostgresError) as error:
            log.warning("retention_failed", error=str(error))
        await asyncio.sleep(interval_s)
