"""PostgreSQL cuts the replica's connections again and again (`pg_terminate_backend`,
what a failover or an administrator does) while tables are played by people and by
server bots: every refused call is UNAVAILABLE, and afterwards nothing of the
replica is left dead — the turn sweeper still plays the bots, the fan-out still
streams live events, health is SERVING — and every game finishes, exactly once.

A connection cut in the middle of a query can surface in asyncpg as
`InternalClientError` (MagicStack/asyncpg#784); the server must treat it as the
outage it is, in every loop that talks to the database."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import asyncpg
import grpc

from .players import ResumingWatcher, Seat, create_table, login, play_game, readers
from .processes import BOT_TURNS_MS, SERVING, channels, game_processes, until
from .stored import assert_acks_logged_once, assert_stream_is_log, assert_whole

CUTS = 60
"""Rounds of cuts, 30 ms apart: every connection of the replica, each time."""
READERS = 12
DOWN = (grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE")


async def test_connections_cut_again_and_again_leave_nothing_dead(
    fresh_dsn: str, tmp_path: Path
) -> None:
    con = await asyncpg.connect(fresh_dsn)
    try:
        async with game_processes(fresh_dsn, 1, tmp_path) as (replica,), channels() as channel:
            targets = [replica.address]
            players = [await login(channel(replica.address), f"P{i}") for i in range(2)]
            played = await create_table(channel(replica.address), players, rounds=2)
            seats = [Seat(p, i, played, targets, channel) for i, p in enumerate(players)]
            bot_tables = [
                await create_table(
                    channel(replica.address),
                    ["bot-0", "bot-1"],
                    rounds=8,
                    turn_timer_ms=BOT_TURNS_MS,
                )
                for _ in range(2)
            ]
            watchers = [
                ResumingWatcher(players[0], t, targets, channel) for t in (played, *bot_tables)
            ]
            watching = [asyncio.create_task(w.run(timeout=80)) for w in watchers]
            game = asyncio.create_task(play_game(seats))
            enough = asyncio.Event()
            reading = asyncio.create_task(readers(targets, channel, seats[1], enough, READERS))
            try:
                async with asyncio.timeout(75):
                    await until(lambda: len(seats[0].acks) >= 5, "the game to be under way")
                    cut = 0
                    for _ in range(CUTS):
                        cut += await con.fetchval(
                            "SELECT count(*) FROM (SELECT pg_terminate_backend(pid)"
                            " FROM pg_stat_activity WHERE datname = current_database()"
                            " AND backend_type = 'client backend' AND pid <> pg_backend_pid()) c"
                        )
                        await asyncio.sleep(0.03)
                    assert cut >= CUTS
                    enough.set()
                    read_failures = await reading
                    await replica.wait_health(SERVING, timeout=15)
                    await game
                    streams = await asyncio.gather(*watching)
            finally:
                enough.set()
                for task in (game, *watching, reading):
                    task.cancel()

        failures = [f for s in seats for f in s.failures] + read_failures
        assert {(f.code, f.reason) for f in failures} <= {DOWN}, [
            f for f in failures if (f.code, f.reason) != DOWN
        ]
        for w in watchers:
            for code, reason, _ in w.ends:
                assert code == grpc.StatusCode.UNAVAILABLE, w.ends
                assert reason in ("DATABASE_UNAVAILABLE", "RESUME_REQUIRED"), w.ends
        log = await assert_acks_logged_once(con, played, [a for s in seats for a in s.acks])
        assert_stream_is_log(streams[0], log)
        for table_id, events in zip(bot_tables, streams[1:], strict=True):
            # Played to the end by the sweeper, streamed to the end by the fan-out.
            bot_log = await assert_whole(con, table_id)
            assert bot_log[-1].kind == "GameEnded"
            assert_stream_is_log(events, bot_log)
            status = await con.fetchval(
                "SELECT status FROM tables WHERE id = $1", uuid.UUID(table_id)
            )
            assert status == "finished"
    finally:
        await con.close()
