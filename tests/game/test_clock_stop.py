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
from .stored import not_presence, table_db

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
async def beating(server: GameServer, dsn: str) -> AsyncIterator[None]:
    """The test marks the clock from now on, as the server's beat loop would."""
    assert server.tables is not None
    clock = server.tables.clock

    async def beat() -> None:
        async with connected(dsn) as con:
            while True:
                await clock.beat(con)
                await asyncio.sleep(0.1)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def first_mark(con: asyncpg.Connection) -> None:
    async with asyncio.timeout(10):
        while await con.fetchval("SELECT beat_at FROM table_clock") is None:
            await asyncio.sleep(0.02)


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
        resumed = await watcher.until(lambda e: not_presence(e.kind))
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
    kinds = [type(x.event) for x in log if not_presence(x.kind)]
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
                stopped_at = await server.tables.clock.beat(con)
                assert stopped_at is not None, "the mark records the stop"
                await server.tables.clock.rearm(stopped_at)
                watcher = players[1].watch(table_id)
                async with beating(server, fresh_dsn):
                    passed = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_PASSED))
                watcher.cancel()
                kinds = [e.kind for e in watcher.events]
                assert table_pb2.EVENT_KIND_TURN_RESUMED in kinds
                assert kinds.index(table_pb2.EVENT_KIND_TURN_RESUMED) < watcher.events.index(passed)
    finally:
        await server.stop(0)


CLOCK_ROW = (
    "SELECT prev_stopped_at, prev_restarted_at, stopped_at, restarted_at, beat_at FROM table_clock"
)


async def test_the_clock_keeps_its_last_two_stops(fresh_dsn: str) -> None:
    server = await start_server(fresh_dsn, beat_s=3_600.0, clock_stop_s=1.0)
    try:
        assert server.tables is not None
        async with connected(fresh_dsn) as con:
            await first_mark(con)
            first = await con.fetchrow(CLOCK_ROW)
            assert first["stopped_at"] is None and first["beat_at"] is not None, "no stop yet"
            await con.execute("UPDATE table_clock SET beat_at = now() - interval '10 seconds'")
            one = await server.tables.clock.beat(con)
            await con.execute("UPDATE table_clock SET beat_at = now() - interval '3 seconds'")
            two = await server.tables.clock.beat(con)
            assert one is not None and two is not None and two > one
            row = await con.fetchrow(CLOCK_ROW)
            assert (row["prev_stopped_at"], row["stopped_at"]) == (one, two)
            assert row["stopped_at"] < row["restarted_at"]
            assert await server.tables.clock.beat(con) is None, "no gap: no stop"
            assert tuple(await con.fetchrow(CLOCK_ROW))[:4] == tuple(row)[:4], "both kept"
    finally:
        await server.stop(0)


async def test_a_turn_caught_by_the_stop_before_the_last_still_gets_its_time_back(
    fresh_dsn: str,
) -> None:
    """The database went out again before this turn, due during the first stop, got
    its time back: the second stop began after its deadline, the first covers it."""
    server = await start_server(fresh_dsn, beat_s=3_600.0, clock_stop_s=1.0)
    try:
        assert server.tables is not None
        async with grpc.aio.insecure_channel(address(server)) as channel:
            players = [await login(channel, f"P{i}") for i in range(2)]
            table_id = await create_table(channel, players, turn_timer_ms=1_000)
            deadline = (await players[0].view(table_id)).turn_deadline.ToMilliseconds()
            async with connected(fresh_dsn) as con:
                await first_mark(con)  # then the test's marks alone
                at = "to_timestamp(($1::bigint + $2::bigint) / 1000.0)"
                # Stop 1 from 0.8 s before the deadline to 0.5 s after; no mark since
                # (nothing swept meanwhile) ...
                await con.execute(
                    f"UPDATE table_clock SET stopped_at = {at}, restarted_at ="
                    f" {at.replace('$2', '$3')}, beat_at = now() - interval '10 seconds'",
                    deadline,
                    -800,
                    500,
                )
                await asyncio.sleep(max(0.0, (deadline + 1_500) / 1000 - time.time()))
                # ... but one 0.2 s after the deadline: stop 2 begins after it.
                await con.execute(f"UPDATE table_clock SET beat_at = {at}", deadline, 200)
                stopped_at = await server.tables.clock.beat(con)
                assert stopped_at is not None
                assert stopped_at.timestamp() * 1000 > deadline, "stop 2 began after it"
                watcher = players[1].watch(table_id)
                async with beating(server, fresh_dsn):
                    passed = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_PASSED))
                watcher.cancel()
            kinds = [e.kind for e in watcher.events[: watcher.events.index(passed)]]
            assert kinds.count(table_pb2.EVENT_KIND_TURN_RESUMED) == 1
    finally:
        await server.stop(0)
