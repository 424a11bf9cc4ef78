"""Moves judged from the state a replica knows the table at: one round trip when
the table is still there, a read and a fresh judgement when another replica
moved it first. Either way every move is logged once, at its version, on the
database's clock."""

from __future__ import annotations

from datetime import timedelta

import grpc
from prometheus_client import REGISTRY

from clients.cli.viewstate import state_from_view
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import Discard, DrawStock
from services.game.rules.bots import GreedyBot
from services.game.server import GameServer

from .harness import (
    Player,
    create_table,
    deck_order,
    login,
    play_turns,
    refused,
    shuffled_deck,
    snapshot,
)
from .requests import Sent
from .stored import table_db
from .test_replicas import assert_actions_logged_once

PLAYING = (table_pb2.PHASE_DRAW, table_pb2.PHASE_PLAY)


def known_state_moves(outcome: str) -> float:
    value = REGISTRY.get_sample_value("rummy_known_state_moves_total", {"outcome": outcome})
    return value or 0.0


async def assert_moves_logged(dsn: str, table_id: str, sent: list[Sent]) -> None:
    """Every acknowledged move is logged once, at its version, in order of the
    database's clock; the table is at the last one."""
    async with table_db(dsn) as db:
        log = await db.log(table_id)
        version, _ = await db.state(table_id)
        times, now = await db.event_times(table_id)
    assert_actions_logged_once(sent, log)
    assert version == 1 + len(sent)
    assert times == sorted(times), "an event is dated before the one logged ahead of it"
    assert now - timedelta(minutes=1) < times[0] and times[-1] <= now


async def test_moves_on_one_replica_commit_from_the_state_it_knows(
    server: GameServer, channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    committed, read = known_state_moves("committed"), known_state_moves("read")
    players = [await login(channel, f"K{i}") for i in range(3)]
    table_id = await create_table(channel, players, deck_order=shuffled_deck(7))
    await play_turns(players, table_id, 9)
    sent = [s for p in players for s in p.sent]
    # The first move may read the table: the replica may not have read the
    # database's clock lately. Every later one needs no read.
    assert known_state_moves("committed") - committed >= len(sent) - 1
    assert known_state_moves("read") == read

    await assert_moves_logged(fresh_dsn, table_id, sent)


async def test_a_replica_that_knows_an_older_state_reads_the_table_and_judges_again(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    """Seat 0 plays through replica A, seat 1 through B, and each looks at the
    table through the other one: when a player's turn comes, the replica it plays
    on last saw the table a turn ago."""
    a, b = channels
    on_a = [await login(a, f"S{i}") for i in range(2)]
    table_id = await create_table(a, on_a, deck_order=shuffled_deck(11))
    actors = [on_a[0], Player(b, on_a[1].token, on_a[1].player_id, on_a[1].name)]
    lookers = [Player(b, on_a[0].token, on_a[0].player_id, "S0 on B"), on_a[1]]
    bot = GreedyBot()
    committed = known_state_moves("committed")
    read = known_state_moves("read") + known_state_moves("unknown")
    turns = 8
    view = await lookers[1].view(table_id)
    for _ in range(turns):
        seat = view.current_seat
        view = await lookers[seat].view(table_id)
        while view.current_seat == seat and view.phase in PLAYING:
            action = bot.move(state_from_view(view), seat)
            assert action is not None
            view = (await actors[seat].send(table_id, action)).view
    # Each turn after the first began on a replica that knew the table a turn ago.
    sent = [s for p in actors for s in p.sent]
    reads = known_state_moves("read") + known_state_moves("unknown") - read
    assert reads >= turns - 1
    assert known_state_moves("committed") - committed == len(sent) - reads

    await assert_moves_logged(fresh_dsn, table_id, sent)
    # Both replicas show each player the same table.
    assert await snapshot(actors, table_id) == await snapshot(lookers, table_id)


async def test_a_move_the_known_state_allows_but_the_table_does_not_is_refused(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    """Seat 0 draws through A, then discards through B: A still knows the table
    in the middle of seat 0's turn, where a second discard would be legal."""
    a, b = channels
    on_a = [await login(a, f"D{i}") for i in range(2)]
    table_id = await create_table(a, on_a, deck_order=deck_order(2))
    first = on_a[0]
    on_b = [Player(b, p.token, p.player_id, p.name) for p in on_a]
    drew = await first.send(table_id, DrawStock())
    hand = [c.id for c in drew.view.hand]
    done = await on_b[0].send(table_id, Discard(hand[0]))
    before = await snapshot(on_b, table_id)  # through B: A is left a move behind

    read = known_state_moves("read")
    assert await refused(first.send(table_id, Discard(hand[1]))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
    )
    assert known_state_moves("read") == read + 1
    assert await snapshot(on_b, table_id) == before
    async with table_db(fresh_dsn) as db:
        version, state = await db.state(table_id)
    assert version == done.version and hand[1] in state.hands[0]


async def test_a_table_a_replica_showed_is_known_to_it(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    """The table is made through A; a player looks at it through B, then moves
    through B: the look was enough to know the table (its state, seats, clock)."""
    a, b = channels
    on_a = [await login(a, f"L{i}") for i in range(2)]
    table_id = await create_table(a, on_a, deck_order=deck_order(2))
    first = Player(b, on_a[0].token, on_a[0].player_id, on_a[0].name)
    await first.view(table_id)
    committed = known_state_moves("committed")
    drew = await first.send(table_id, DrawStock())
    assert known_state_moves("committed") == committed + 1
    async with table_db(fresh_dsn) as db:
        version, state = await db.state(table_id)
    assert version == drew.version and drew.card.id in state.hands[0]
