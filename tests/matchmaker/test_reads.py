"""Concurrent single-ticket reads share queries and still answer each reader right."""

from __future__ import annotations

import asyncio
import uuid

from services.common.db import migrate, open_pool
from services.matchmaker import endings, queueing, tickets


async def test_concurrent_reads_each_get_their_own_ticket(fresh_dsn: str) -> None:
    pool = await open_pool(fresh_dsn, max_size=4)
    try:
        await migrate(pool)
        made = []
        async with pool.acquire() as con:
            for i in range(30):
                row = await queueing.queue_at_once(
                    con,
                    player_id=f"reader-{i}",
                    table_size=2 + i % 3,
                    ruleset="cafe",
                    options={},
                    family="cafe|fifo|{}",
                    mode="fifo",
                    ttl_s=60,
                )
                assert row is not None
                made.append(row)
        reads = tickets.Reads(pool)
        unknown = uuid.uuid4()
        wanted = [t.id for t in made] + [made[0].id, unknown]
        got = await asyncio.gather(*(reads.get(ticket_id) for ticket_id in wanted))
        assert [g.id if g else None for g in got] == [t.id for t in made] + [made[0].id, None]
        assert [g.player_id for g in got if g] == [t.player_id for t in made] + ["reader-0"]
        # A later read is a new query: it sees what changed meanwhile.
        await endings.cancel(pool, made[1].id, "gone")
        later = await reads.get(made[1].id)
        assert later is not None and later.state == "cancelled"
    finally:
        await pool.close()


async def test_a_failed_read_fails_every_reader_of_it(fresh_dsn: str) -> None:
    pool = await open_pool(fresh_dsn, max_size=2)
    try:
        # No migration: the tickets table does not exist, so the shared query fails.
        reads = tickets.Reads(pool)
        results = await asyncio.gather(
            *(reads.get(uuid.uuid4()) for _ in range(3)), return_exceptions=True
        )
        assert all(isinstance(r, Exception) for r in results), results
    finally:
        await pool.close()
