"""The matchmaker's retention against a real PostgreSQL: ended tickets and settled
matches go past their age, live and recent ones stay."""

from __future__ import annotations

import asyncio
import uuid

from services.common.db import Pool
from services.matchmaker.retention import purge_matchmaking
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer

DAY = 86_400.0


async def test_ended_tickets_and_matches_are_purged_live_ones_kept(pool: Pool) -> None:
    async def ticket(state: str, ended_days_ago: float | None) -> uuid.UUID:
        ticket_id = uuid.uuid4()
        await pool.execute(
            "INSERT INTO tickets (id, player_id, table_size, ruleset, options, family, state,"
            " expires_at, ended_at) VALUES ($1, $2, 2, 'cafe', '{}', 'f', $3,"
            " now() + interval '1 hour',"
            " CASE WHEN $4::float8 IS NULL THEN NULL"
            " ELSE now() - make_interval(secs => $4::float8) END)",
            ticket_id,
            f"player-{ticket_id}",
            state,
            None if ended_days_ago is None else ended_days_ago * DAY,
        )
        return ticket_id

    async def match(done_days_ago: float | None) -> uuid.UUID:
        table_id = uuid.uuid4()
        await pool.execute(
            "INSERT INTO matches (table_id, request, state, done_at) VALUES ($1, '\\x00', $2,"
            " CASE WHEN $3::float8 IS NULL THEN NULL"
            " ELSE now() - make_interval(secs => $3::float8) END)",
            table_id,
            "creating" if done_days_ago is None else "created",
            None if done_days_ago is None else done_days_ago * DAY,
        )
        return table_id

    await ticket("matched", 40)
    await ticket("expired", 35)
    kept_tickets = {await ticket("cancelled", 3), await ticket("queued", None)}
    await match(40)
    kept_matches = {await match(3), await match(None)}

    assert await purge_matchmaking(pool, older_than_s=30 * DAY, batch=1) == (2, 1)

    assert {r["id"] for r in await pool.fetch("SELECT id FROM tickets")} == kept_tickets
    assert {r["table_id"] for r in await pool.fetch("SELECT table_id FROM matches")} == kept_matches


async def test_the_matchmaker_purges_its_own_rows(pool: Pool, fresh_dsn: str) -> None:
    """The matchmaker's replicas purge ended tickets, not the game servers."""
    old = uuid.uuid4()
    await pool.execute(
        "INSERT INTO tickets (id, player_id, table_size, ruleset, options, family, state,"
        " expires_at, ended_at) VALUES ($1, 'p', 2, 'cafe', '{}', 'f', 'expired',"
        " now() - interval '40 days', now() - interval '40 days')",
        old,
    )
    server = MatchmakerServer(
        MatchmakerConfig(dsn=fresh_dsn, secret="s" * 40, game_target="127.0.0.1:1")
    )
    await server.start(matching=False)
    try:
        async with asyncio.timeout(10):
            while await pool.fetchval("SELECT count(*) FROM tickets WHERE id = $1", old):
                await asyncio.sleep(0.02)
    finally:
        await server.stop(0)
