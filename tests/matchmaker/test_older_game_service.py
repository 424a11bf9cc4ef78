"""A game service that predates CreateTables (a rolling upgrade): the matchmaker
falls back to one CreateTable per table, and every match completes."""

from __future__ import annotations

import asyncio

from services.matchmaker.table_maker import CREATE_IN_FLIGHT

from .game_front import CREATE_TABLE, CREATE_TABLES, Front, game_front, unchanged
from .harness import Store, Waiter, backend, store
from .test_recovery import check_completed, queue_tables


def without_create_tables(target: str) -> Front:
    """In front of the game service: CreateTable alone is passed on; any other
    method is UNIMPLEMENTED, as on an older build."""
    return game_front(target, {CREATE_TABLE: unchanged})


async def test_matches_complete_through_a_game_service_without_create_tables(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, replicas=0) as b, store(fresh_dsn) as db:
        async with without_create_tables(b.game_target) as (older, asked):
            replica = await b.add_replica(game_target=older, matching=True)
            _, waiters = await queue_tables(b, replica)
            await check_completed_anywhere(db, waiters)
        assert asked[0] == CREATE_TABLES  # tried first; then only by batches already asking
        assert 1 <= asked.count(CREATE_TABLES) <= CREATE_IN_FLIGHT
        assert asked.count(CREATE_TABLE) >= 6


async def check_completed_anywhere(db: Store, waiters: list[Waiter]) -> None:
    """`check_completed`, against the table ids the matches were given."""
    await asyncio.gather(*(w.end() for w in waiters))
    rows = await db.con.fetch("SELECT id, table_id FROM tickets")
    await check_completed(db, waiters, {str(r["id"]): r["table_id"] for r in rows})
