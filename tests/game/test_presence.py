"""Presence: the other seats are told when a player's connection to the table
(their Watch stream) drops and comes back, whichever replica serves whom, and
the view says who is connected. A drop is told only after a debounce (a quick
reconnect, or a stream moving to another replica, is no news), and presence
never moves the table's version, which the players' moves check."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable

import asyncpg
import grpc
import pytest

from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game.presence import PresenceTimings
from services.game.rules.events import PlayerConnection
from services.game.server import GameServer

from .harness import (
    LONG_TURNS_MS,
    Player,
    Watcher,
    address,
    create_table,
    kind_is,
    login,
    service_auth,
    shuffled_deck,
    start_replicas,
)
from .stored import table_db

FAST = PresenceTimings(lease_s=2.0, beat_s=0.4, debounce_s=1.5, sweep_s=0.1)
"""Presence at test speed: leases of 2 s, drops told 1.5 s after the last stream."""


def presence_of(seat: int, connected: bool) -> Callable[[table_pb2.TableEvent], bool]:
    def match(event: table_pb2.TableEvent) -> bool:
        return (
            event.kind == table_pb2.EVENT_KIND_PLAYER_CONNECTION
            and event.seat == seat
            and event.player_connection.connected == connected
        )

    return match


@pytest.fixture
async def fast_replicas(fresh_dsn: str) -> AsyncIterator[list[GameServer]]:
    servers = await start_replicas(fresh_dsn, 2, presence=FAST)
    try:
        yield servers
    finally:
        for srv in servers:
            with contextlib.suppress(Exception):
                await srv.stop(0)


@pytest.fixture
async def two(fast_replicas: list[GameServer]) -> AsyncIterator[list[grpc.aio.Channel]]:
    async with contextlib.AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(grpc.aio.insecure_channel(address(s)))
            for s in fast_replicas
        ]


def on(channel: grpc.aio.Channel, player: Player) -> Player:
    """The same player, talking to another replica."""
    return Player(channel, player.token, player.player_id, player.name)


async def seated_and_connected(
    channels: list[grpc.aio.Channel],
) -> tuple[list[Player], str, Watcher, Watcher]:
    """Two players at a table (P0 watching through A, P1 through B), once P1 has
    been told that both are connected."""
    a, b = channels
    players = [await login(a, f"P{i}") for i in range(2)]
    table_id = await create_table(
        a, players, deck_order=shuffled_deck(2), turn_timer_ms=LONG_TURNS_MS
    )
    p0 = players[0].watch(table_id)
    p1 = on(b, players[1]).watch(table_id)
    told = [presence_of(0, True), presence_of(1, True)]
    async with asyncio.timeout(10):
        while told:
            event = await p1.next()
            assert event is not None
            told = [m for m in told if not m(event)]
    return players, table_id, p0, p1


async def test_a_drop_and_a_return_are_told_to_another_seat_on_another_replica(
    two: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    b = two[1]
    players, table_id, p0, p1 = await seated_and_connected(two)
    view = await on(b, players[1]).view(table_id)
    assert [s.connected for s in view.seats] == [True, True]
    assert view.version == 1, "presence is no move"

    p0.cancel()  # P0's connection drops (its stream on A closes)
    dropped_at = time.monotonic()
    told = await p1.until(presence_of(0, False), timeout=10)
    assert time.monotonic() - dropped_at >= FAST.debounce_s * 0.9, "told before the debounce"
    assert told.version == 1
    view = await on(b, players[1]).view(table_id)
    assert [s.connected for s in view.seats] == [False, True]
    assert view.last_seq == told.seq

    # P0 comes back, on the other replica: told at once.
    back = on(b, players[0]).watch(table_id, after=view.last_seq)
    await p1.until(presence_of(0, True), timeout=5)
    assert [s.connected for s in (await players[1].view(table_id)).seats] == [True, True]

    # None of it made the view P0 acted on stale: a move at version 1 applies.
    mover = players[view.current_seat]
    reply = await mover.call(
        "DrawStock",
        game_pb2.DrawStockRequest(table_id=table_id, request_id="draw-1", expected_version=1),
    )
    assert reply.version == 2
    # Its answer's view says who is connected as of the move, as GetTable would.
    assert [s.connected for s in reply.view.seats] == [True, True]
    await back.until(kind_is(table_pb2.EVENT_KIND_DREW))
    back.cancel()
    p1.cancel()
    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    told_log = [x.event for x in log if isinstance(x.event, PlayerConnection)]
    told_each = [(e.seat, e.connected) for e in told_log]
    assert set(told_each[:2]) == {(0, True), (1, True)}
    assert told_each[2:] == [(0, False), (0, True)]
    versions = {x.version for x in log if isinstance(x.event, PlayerConnection)}
    assert versions == {1}, "presence never moves the version"
    assert [x.seq for x in log] == list(range(1, len(log) + 1)), "one seq each, no gap"


@pytest.mark.parametrize("overlap", [True, False])
async def test_a_stream_moving_to_another_replica_or_a_quick_reconnect_tells_nothing(
    two: list[grpc.aio.Channel], overlap: bool
) -> None:
    b = two[1]
    players, table_id, p0, p1 = await seated_and_connected(two)
    if overlap:  # the new stream opens before the old one closes
        moved = on(b, players[0]).watch(table_id)
        await moved.until(presence_of(1, True))
        p0.cancel()
    else:  # a blip: closed, then open again half a debounce later
        p0.cancel()
        await asyncio.sleep(FAST.debounce_s / 2)
        moved = on(b, players[0]).watch(table_id)
    # Well past the debounce and a lease, something happens at the table: P1 hears
    # of it with no news of P0's connection before it.
    await asyncio.sleep(FAST.debounce_s + FAST.lease_s)
    view = await players[1].view(table_id)
    assert [s.connected for s in view.seats] == [True, True]
    await players[view.current_seat].call(
        "DrawStock", game_pb2.DrawStockRequest(table_id=table_id, request_id="draw-1")
    )
    await p1.until(kind_is(table_pb2.EVENT_KIND_DREW))
    assert not [e for e in p1.events if presence_of(0, False)(e)], "P0's blip was told"
    assert len([e for e in p1.events if presence_of(0, True)(e)]) == 1
    moved.cancel()
    p1.cancel()


async def test_bots_are_always_connected_and_spectators_have_no_presence(
    two: list[grpc.aio.Channel],
) -> None:
    a, b = two
    human = await login(a, "Human")
    spectator = await login(b, "Spectator")
    stub = tables_pb2_grpc.TableServiceStub(a)
    reply = await stub.CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="cafe",
            options=table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS),
            players=[
                tables_pb2.SeatedPlayer(player_id=human.player_id, display_name="Human"),
                tables_pb2.SeatedPlayer(player_id="bot-1", display_name="Bot", is_bot=True),
            ],
            deck_order=shuffled_deck(2),
        ),
        metadata=service_auth(),
        timeout=10,
    )
    table_id = reply.table_id
    view = await spectator.view(table_id)
    assert [s.connected for s in view.seats] == [False, True], "a bot is always there"
    watching = spectator.watch(table_id)
    mine = human.watch(table_id)
    await watching.until(presence_of(0, True), timeout=10)
    await asyncio.sleep(FAST.debounce_s)
    mine.cancel()
    await watching.until(presence_of(0, False), timeout=10)
    # Only the human seat was ever told of; the spectator's stream told nothing.
    told = [e for e in watching.events if e.kind == table_pb2.EVENT_KIND_PLAYER_CONNECTION]
    assert [(e.seat, e.player_connection.connected) for e in told] == [(0, True), (0, False)]
    watching.cancel()


async def test_no_drop_is_told_right_after_an_outage_the_clock_recorded(
    two: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    """Leases run out while nobody can renew them: right after an outage, the
    replicas renew theirs before anyone is told gone. A seat still without a
    stream a lease and a debounce after the outage is told then."""
    b = two[1]
    players, table_id, p0, p1 = await seated_and_connected(two)
    # As the table clock records an outage that has just ended.
    con = await asyncpg.connect(fresh_dsn)
    try:
        await con.execute(
            "UPDATE table_clock SET stopped_at = now() - interval '20 seconds',"
            " restarted_at = now() WHERE id = 1"
        )
    finally:
        await con.close()
    p0.cancel()
    dropped_at = time.monotonic()
    await asyncio.sleep(FAST.debounce_s + 1.0)
    view = await on(b, players[1]).view(table_id)
    assert [s.connected for s in view.seats] == [True, True], "told gone during the grace"
    await p1.until(presence_of(0, False), timeout=10)
    assert time.monotonic() - dropped_at >= FAST.lease_s + FAST.debounce_s - 0.5
    p1.cancel()
