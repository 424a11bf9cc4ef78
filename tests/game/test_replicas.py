"""Two game replicas on one database: any replica serves any table, watchers on
one see what players do on the other, resumes cross replicas, and a replica
that stops mid-game loses nothing."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from clients.cli.viewstate import state_from_view
from services.common.errors import error_info
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.bots import GreedyBot
from services.game.server import GameServer

from .harness import (
    Player,
    create_table,
    kind_is,
    login,
    play_to_end,
    play_turns,
    shuffled_deck,
)
from .requests import Sent
from .stored import Logged, action_kind, assert_log_matches, table_db


def assert_actions_logged_once(sent: list[Sent], log: list[Logged]) -> None:
    """Each acknowledged action is in the log exactly once, at the version it was
    answered with, and nothing else was applied."""
    first_of: dict[int, Logged] = {}
    for x in log:
        first_of.setdefault(x.version, x)
    versions = [s.version for s in sent]
    assert len(set(versions)) == len(versions), "two answers share a version"
    # Version 1 is the deal; every later version is one acknowledged action.
    assert sorted(versions) == list(range(2, 2 + len(sent)))
    assert set(first_of) == {1, *versions}
    for s in sent:
        logged = first_of[s.version]
        assert logged.kind == action_kind(s.action), s
        assert logged.event.seat == s.seat  # type: ignore[attr-defined]


async def test_watchers_on_another_replica_see_every_event_once_in_order(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    a, b = channels
    players = [await login(a, f"P{i}") for i in range(3)]
    table_id = await create_table(a, players, deck_order=shuffled_deck(3))
    # Every seat and a spectator watch through replica B from the start.
    watchers = [(await login(b, "Spectator")).watch(table_id)]
    for p in players:
        on_b = Player(b, p.token, p.player_id, p.name)
        watchers.append(on_b.watch(table_id))
    for w in watchers:
        # Caught up with the log: everything after this reaches B live.
        await w.until(kind_is(table_pb2.EVENT_KIND_TURN_STARTED))
    _, *streams = await asyncio.gather(
        play_to_end(players, table_id), *(w.to_end() for w in watchers)
    )
    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    assert log[-1].kind == table_pb2.EVENT_KIND_GAME_ENDED
    for events in streams:
        assert_log_matches(events, log)
    assert_actions_logged_once([s for p in players for s in p.sent], log)


async def test_a_resumed_watch_on_the_other_replica_has_no_gap_and_no_duplicate(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    a, b = channels
    players = [await login(a, f"P{i}") for i in range(2)]
    # A deal that lasts well past the turns this test plays before the end.
    table_id = await create_table(a, players, deck_order=shuffled_deck(16))
    watcher_b = Player(b, players[1].token, players[1].player_id, "P1 on B")
    watcher_a = Player(a, players[1].token, players[1].player_id, "P1 on A")

    await play_turns(players, table_id, 4)
    first = watcher_b.watch(table_id)
    await first.until(kind_is(table_pb2.EVENT_KIND_DISCARDED))  # part of what is logged
    first.cancel()
    seen = list(first.events)

    # The game moves on while nobody watches; the watcher comes back on A.
    await play_turns(players, table_id, 3)
    second = watcher_a.watch(table_id, after=seen[-1].seq)
    await second.until(kind_is(table_pb2.EVENT_KIND_TURN_STARTED))
    # Caught up with the log: live now. Cut again mid-game and go back to B.
    await play_turns(players, table_id, 2)
    await second.until(kind_is(table_pb2.EVENT_KIND_DISCARDED))
    second.cancel()
    seen += second.events

    third = watcher_b.watch(table_id, after=seen[-1].seq)
    await asyncio.gather(play_to_end(players, table_id), third.to_end())
    seen += third.events

    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    assert len(first.events) < len(log) and len(second.events) < len(log)
    assert_log_matches(seen, log)


@pytest.mark.parametrize("grace", [None, 0.0], ids=["graceful", "abrupt"])
async def test_a_replica_stopped_mid_game_loses_nothing(
    replicas: list[GameServer],
    channels: list[grpc.aio.Channel],
    fresh_dsn: str,
    grace: float | None,
) -> None:
    a, b = channels
    players = [await login(a, f"P{i}") for i in range(2)]
    table_id = await create_table(a, players, deck_order=shuffled_deck(8))
    watch_a = Player(a, players[0].token, players[0].player_id, "P0 on A").watch(table_id)
    watch_b = Player(b, players[1].token, players[1].player_id, "P1 on B").watch(table_id)
    view = await play_turns(players, table_id, 5)
    assert view.phase != table_pb2.PHASE_GAME_OVER
    await watch_a.until(lambda e: e.seq == view.last_seq)

    # The next action and the stop of replica A race each other.
    by_seat = {p.seat: p for p in players}
    current = by_seat[view.current_seat]
    mine = await current.view(table_id)
    action = GreedyBot().move(state_from_view(mine), mine.my_seat)
    assert action is not None
    request_id = "in-flight-when-a-stopped"
    outcome, _ = await asyncio.gather(
        current.send(table_id, action, request_id=request_id),
        replicas[0].stop(grace),
        return_exceptions=True,
    )
    # A's watcher is told to resume elsewhere; it does so on B from its last seq.
    try:
        await watch_a.to_end()
        raise AssertionError("the stream on the stopped replica ended as if the game had")
    except grpc.aio.AioRpcError as error:
        assert error.code() == grpc.StatusCode.UNAVAILABLE, error
        info = error_info(error)
        assert info is not None and info.reason == "RESUME_REQUIRED"
    for p in players:
        p.use(b)
    if isinstance(outcome, BaseException):
        # Unacknowledged: retry on B with the same request id (applies at most once).
        await current.send(table_id, action, request_id=request_id)
    else:
        retried = await current.send(table_id, action, request_id=request_id)
        assert retried.SerializeToString() == outcome.SerializeToString()
        current.sent.pop()  # the retry is the same acknowledged action
    resumed = Player(b, players[0].token, players[0].player_id, "P0 on B").watch(
        table_id, after=watch_a.events[-1].seq
    )
    await asyncio.gather(play_to_end(players, table_id), resumed.to_end(), watch_b.to_end())

    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    assert_log_matches(watch_a.events + resumed.events, log)
    assert_log_matches(watch_b.events, log)
    assert_actions_logged_once([s for p in players for s in p.sent], log)
    assert sum(1 for p in players for s in p.sent if s.request_id == request_id) == 1


async def test_a_replica_shows_a_table_as_it_is_whichever_replica_moved_it(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    """GetTable answers from the state a replica keeps while the table is still
    at that version, and reads the state again once another replica moved it:
    both replicas always show the same table."""
    a, b = channels
    on_a = [await login(a, f"G{i}") for i in range(2)]
    on_b = [Player(b, p.token, p.player_id, p.name) for p in on_a]
    table_id = await create_table(a, on_a, deck_order=shuffled_deck(5))
    version = 0
    for turn in range(4):
        movers = on_b if turn % 2 else on_a  # each replica moves it in turn
        await play_turns(movers, table_id, 1)
        for seat in range(2):
            seen_a = timeless(await on_a[seat].view(table_id))
            seen_b = timeless(await on_b[seat].view(table_id))
            assert seen_a.version > version, "the table moved on both replicas"
            assert seen_a == seen_b, (turn, seat)
            # Asked again, the replica answers from what it keeps: the same view.
            assert timeless(await on_a[seat].view(table_id)) == seen_a
        version = seen_a.version


def timeless(view: table_pb2.TableView) -> table_pb2.TableView:
    """The view without the server's clock reading, which differs at every call."""
    view.ClearField("server_time")
    return view
