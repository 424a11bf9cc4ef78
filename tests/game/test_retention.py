"""Retention against a real PostgreSQL: old finished tables go with their logs;
recent and active ones stay; concurrent purges delete each row once."""

from __future__ import annotations

import asyncio
import uuid

from services.common.db import Pool, migrate, open_pool
from services.game.retention import purge_answers, purge_finished
from services.game.server import GameConfig, GameServer

DAY = 86_400.0


async def add_table(pool: Pool, *, finished_days_ago: float | None, events: int = 3) -> uuid.UUID:
    """A table with seats, events and a stored request; finished that long ago, or active."""
    table_id = uuid.uuid4()
    async with pool.acquire() as con, con.transaction():
        if finished_days_ago is None:
            await con.execute(
                "INSERT INTO tables (id, ruleset, state, last_seq, created_at)"
                " VALUES ($1, 'cafe', '\\x00', $2, now() - interval '400 days')",
                table_id,
                events,
            )
        else:
            await con.execute(
                "INSERT INTO tables (id, ruleset, state, last_seq, status, finished_at)"
                " VALUES ($1, 'cafe', '\\x00', $2, 'finished',"
                " now() - make_interval(secs => $3))",
                table_id,
                events,
                finished_days_ago * DAY,
            )
        await con.executemany(
            "INSERT INTO table_seats (table_id, seat, player_id) VALUES ($1, $2, $3)",
            [(table_id, s, f"p{s}") for s in range(2)],
        )
        await con.executemany(
            "INSERT INTO table_events (table_id, seq, version, kind, payload)"
            " VALUES ($1, $2, $2, 'test', '\\x01')",
            [(table_id, seq) for seq in range(1, events + 1)],
        )
        await con.execute(
            "INSERT INTO action_requests (table_id, player_id, request_id, response)"
            " VALUES ($1, 'p0', 'r1', '\\x02')",
            table_id,
        )
    return table_id


async def rows(pool: Pool, table: str, table_id: uuid.UUID) -> int:
    column = "id" if table == "tables" else "table_id"
    count = await pool.fetchval(f"SELECT count(*) FROM {table} WHERE {column} = $1", table_id)
    assert isinstance(count, int)
    return count


CHILDREN = ("table_seats", "table_events", "action_requests")


async def test_old_finished_tables_go_with_their_logs(pool: Pool) -> None:
    old = [await add_table(pool, finished_days_ago=40) for _ in range(5)]
    recent = await add_table(pool, finished_days_ago=2)
    active = await add_table(pool, finished_days_ago=None)

    # Batches of 2: five old tables take three batches, the last one short.
    assert await purge_finished(pool, older_than_s=30 * DAY, batch=2) == 5

    for table_id in old:
        for table in ("tables", *CHILDREN):
            assert await rows(pool, table, table_id) == 0, table
    for table_id in (recent, active):
        assert await rows(pool, "tables", table_id) == 1
        assert await rows(pool, "table_events", table_id) == 3
        for table in CHILDREN:
            assert await rows(pool, table, table_id) > 0
    assert await purge_finished(pool, older_than_s=30 * DAY, batch=2) == 0


async def test_two_concurrent_purges_delete_each_table_once(pool: Pool) -> None:
    old = [await add_table(pool, finished_days_ago=31 + k / 100, events=1) for k in range(60)]
    kept = await add_table(pool, finished_days_ago=1)

    counts = await asyncio.gather(
        purge_finished(pool, older_than_s=30 * DAY, batch=7),
        purge_finished(pool, older_than_s=30 * DAY, batch=7),
    )

    assert sum(counts) == len(old)
    assert await pool.fetchval("SELECT count(*) FROM tables") == 1
    assert await rows(pool, "tables", kept) == 1
    assert await pool.fetchval("SELECT count(*) FROM table_events WHERE table_id <> $1", kept) == 0


async def test_the_server_purges_on_start_and_zero_keeps_forever(fresh_dsn: str) -> None:
    probe = await open_pool(fresh_dsn, max_size=2)
    try:
        await migrate(probe)
        old = await add_table(probe, finished_days_ago=400)
        server = GameServer(GameConfig(dsn=fresh_dsn, secret="s" * 40, event_retention_days=0))
        await server.start()
        try:
            for _ in range(100):
                if await rows(probe, "action_requests", old) == 0:
                    break
                await asyncio.sleep(0.05)
        finally:
            await server.stop(0)
        assert await rows(probe, "tables", old) == 1, "kept forever"
        assert await rows(probe, "action_requests", old) == 0, "but not its stored answers"

        server = GameServer(GameConfig(dsn=fresh_dsn, secret="s" * 40, event_retention_days=30))
        await server.start()
        try:
            for _ in range(100):
                if await rows(probe, "tables", old) == 0:
                    break
                await asyncio.sleep(0.05)
            assert await rows(probe, "tables", old) == 0
        finally:
            await server.stop(0)
    finally:
        await probe.close()


async def test_stored_answers_go_an_hour_after_the_end_the_table_stays(pool: Pool) -> None:
    done = [await add_table(pool, finished_days_ago=2 / 24) for _ in range(3)]
    just_done = await add_table(pool, finished_days_ago=10 / 1440)
    active = await add_table(pool, finished_days_ago=None)

    assert await purge_answers(pool, older_than_s=3600, batch=2) == 3

    for table_id in done:
        assert await rows(pool, "action_requests", table_id) == 0
        assert await rows(pool, "tables", table_id) == 1
        assert await rows(pool, "table_events", table_id) == 3
        assert await rows(pool, "table_seats", table_id) == 2
    for table_id in (just_done, active):
        assert await rows(pool, "action_requests", table_id) == 1
    assert await purge_answers(pool, older_than_s=3600) == 0, "each table is cleared once"
