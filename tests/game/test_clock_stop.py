"""A stop of the turns' clock: while nobody can reach the service (here every
replica is down; a database outage looks the same to the marks), no move can be
made, so a turn whose time ran out meanwhile must not time out the moment the
service is back. Each replica marks about every second that it reached the
database; the first mark after a gap records it, and every turn in play then
gets back the time it had left (`TurnResumed`) before it may time out, once,
however many replicas sweep."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import asyncpg
import grpc

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules import events as ev
from services.game.server import GameServer

from .harness import (
    Player,
    address,
    create_table,
    kind_is,
    login,
    start_replicas,
    start_server,
)
from .stored import table_db

CLOCK = {"beat_s": 0.1, "clock_stop_s": 1.0}
"""Marks every 100 ms; a gap of a second stops the clock."""
TIMER_MS = 2_500


@contextlib.asynccontextmanager
async def replica(dsn: str) -> AsyncIterator[tuple[GameServer, grpc.aio.Channel]]:
    server = await start_server(dsn, **CLOCK)
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            yield server, channel
    finally:
        await server.stop(0)


@contextlib.asynccontextmanager
async def connected(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    con = await asyncpg.connect(dsn)
    try:
        yield con
    finally:
        await con.close()


@contextlib.asynccontextmanager
async def replicas(dsn: str) -> AsyncIterator[list[grpc.aio.Channel]]:
    """Two replicas started at once: their first marks race for the clock's row."""
    servers = await start_replicas(dsn, 2, **CLOCK)
    try:
        async with contextlib.AsyncExitStack() as stack:
            yield [
                await stack.enter_async_context(grpc.aio.insecure_channel(address(s)))
                for s in servers
            ]
    finally:
        for server in servers:
            await server.stop(0)


async def test_a_turn_whose_time_ran_out_while_the_service_was_down_gets_it_back(
    fresh_dsn: str,
) -> None:
    async with replica(fresh_dsn) as (_, channel):
        players = [await login(channel, f"P{i}") for i in range(2)]
        table_id = await create_table(channel, players, turn_timer_ms=TIMER_MS)
        view = await players[0].view(table_id)
        left_ms = view.turn_deadline.ToMilliseconds() - view.server_time.ToMilliseconds()
    stopped = time.monotonic()
    await asyncio.sleep(TIMER_MS / 1000 + 1.0)  # seat 0's time runs out, nobody is there

    # Two replicas come back together: the turn is resumed once, then times out.
    async with replicas(fresh_dsn) as (a, b):
        restarted = time.monotonic()
        on_a = Player(a, players[1].token, players[1].player_id, "P1 on A")
        on_b = Player(b, players[0].token, players[0].player_id, "P0 on B")
        watcher = on_a.watch(table_id, after=view.last_seq)
        resumed = await watcher.until(lambda e: e.kind != table_pb2.EVENT_KIND_UNSPECIFIED)
        assert resumed.kind == table_pb2.EVENT_KIND_TURN_RESUMED, "nothing timed out first"
        assert resumed.seat == 0 and resumed.turn_resumed.turn == 1
        stopped_for = resumed.turn_resumed.stopped_for.ToMilliseconds()
        assert 1_000 <= stopped_for <= (restarted - stopped) * 1000 + 1_000
        assert not resumed.turn_resumed.HasField("claim_deadline")

        # Seat 0 sees its countdown again, from the time it had left.
        again = await on_b.view(table_id)
        countdown = again.turn_deadline.ToMilliseconds() - again.server_time.ToMilliseconds()
        assert again.current_seat == 0 and again.phase == table_pb2.PHASE_DRAW
        assert left_ms - 1_000 <= countdown <= TIMER_MS  # its last mark was just before
        assert again.turn_deadline == resumed.turn_resumed.deadline
        passed = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_PASSED))
        assert passed.seat == 0, "the resumed turn times out in its own time"
        watcher.cancel()

    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    kinds = [type(x.event) for x in log]
    assert kinds[:4] == [ev.RoundDealt, ev.TurnBegan, ev.TurnResumed, ev.TurnPassed]
    assert kinds.count(ev.TurnResumed) == 1, "one resume, however many replicas sweep"


async def test_a_turn_begun_after_the_service_came_back_is_not_resumed(
    fresh_dsn: str,
) -> None:
    async with replica(fresh_dsn):
        pass  # the clock's first marks
    await asyncio.sleep(1.5)
    async with replica(fresh_dsn) as (_, channel):
        players = [await login(channel, f"P{i}") for i in range(2)]
        table_id = await create_table(channel, players, turn_timer_ms=300, turn_cap=3)
        events = await players[1].watch(table_id).to_end()
    kinds = [e.kind for e in events]
    assert table_pb2.EVENT_KIND_TURN_RESUMED not in kinds
    assert kinds.count(table_pb2.EVENT_KIND_TURN_PASSED) == 3


async def test_no_turn_times_out_while_no_replica_has_marked_the_clock(fresh_dsn: str) -> None:
    """A stop not yet recorded may be under way (a replica that reached the database
    again, its first mark still to come): nothing is swept until the mark that
    records it, which then resumes the turn before it may time out."""
    server = await start_server(fresh_dsn, beat_s=3_600.0, clock_stop_s=1.0)  # marks once
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            players = [await login(channel, f"P{i}") for i in range(2)]
            table_id = await create_table(channel, players, turn_timer_ms=300)
            async with table_db(fresh_dsn) as db, connected(fresh_dsn) as con:
                await con.execute("UPDATE table_clock SET beat_at = now() - interval '10 seconds'")
                await asyncio.sleep(1.0)  # the turn is long due
                assert [type(x.event) for x in await db.log(table_id)] == [
                    ev.RoundDealt,
                    ev.TurnBegan,
                ], "nothing swept while nobody marks"
                assert server.tables is not None
                await server.tables.beat()
                watcher = players[1].watch(table_id)
                passed = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_PASSED))
                watcher.cancel()
                kinds = [e.kind for e in watcher.events]
                assert table_pb2.EVENT_KIND_TURN_RESUMED in kinds
                assert kinds.index(table_pb2.EVENT_KIND_TURN_RESUMED) < watcher.events.index(passed)
    finally:
        await server.stop(0)


CLOCK_ROW = "SELECT stopped_at, restarted_at, beat_at FROM table_clock"


async def test_a_stop_soon_after_the_last_one_is_recorded_as_one_with_it(
    fresh_dsn: str,
) -> None:
    """A database that goes out again before every turn was resumed loses none: the
    new stop starts where the last one did when it began within a minute of its end."""
    server = await start_server(fresh_dsn, beat_s=3_600.0, clock_stop_s=1.0)
    try:
        assert server.tables is not None
        async with connected(fresh_dsn) as con:
            now = await con.fetchval("SELECT now()")
            await con.execute(
                "UPDATE table_clock SET stopped_at = $1::timestamptz - interval '100 seconds',"
                " restarted_at = $1::timestamptz - interval '40 seconds',"
                " beat_at = $1::timestamptz - interval '10 seconds'",
                now,
            )
            await server.tables.beat()
            stopped, restarted, beat = await con.fetchrow(CLOCK_ROW)
            assert (now - stopped).total_seconds() == 100, "merged with the last stop"
            assert restarted == beat and restarted > now
            await con.execute(
                "UPDATE table_clock SET restarted_at = $1::timestamptz - interval '80 seconds',"
                " beat_at = $1::timestamptz - interval '10 seconds'",
                now,
            )
            await server.tables.beat()
            stopped, restarted, _ = await con.fetchrow(CLOCK_ROW)
            assert (now - stopped).total_seconds() == 10, "a stop of its own"
            await server.tables.beat()  # no gap: the stop is kept as it is
            again, restarted_again, _ = await con.fetchrow(CLOCK_ROW)
            assert (again, restarted_again) == (stopped, restarted)
    finally:
        await server.stop(0)
