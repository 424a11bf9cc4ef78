"""Bots at a person's pace (`pacing`): where a person plays, a bot plays its turn
one action at a time, each its own commit after a think time, through the same
sweeper as timeouts; a table of bots alone still plays each turn whole. The
level the table was made with shows on every bot seat."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator

import grpc
import pytest

from services.common.errors import error_info
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.game.pacing import DRAW_THINK_MS, PLAY_THINK_MS
from services.game.rules.actions import Claim, Discard, DrawStock
from services.game.rules.ruleset import CONTRACT
from services.game.server import GameServer

from ..rules.helpers import deck_order as scripted_order
from ..rules.test_claims import HANDS
from .harness import LONG_TURNS_MS, Player, Watcher, address, login, service_auth, start_server
from .stored import not_presence

PACE = 0.1
"""Think times a tenth of a person's: 150-300 ms before a draw, 100-200 ms before
each later action."""
HUMAN = "AS 3H 5S 8H 9D JH 2H 4S 6C TC KD QC 7D"
BOT = "7S 8S 9S 4H 4D 4C KH QD JC 2C 3D 6H AD"
"""The bot holds a run and a group: on its first turn it draws, melds, discards."""


@pytest.fixture
async def paced(fresh_dsn: str) -> AsyncIterator[GameServer]:
    srv = await start_server(fresh_dsn, bot_pace=PACE)
    try:
        yield srv
    finally:
        await srv.stop(0)


@pytest.fixture
async def paced_channel(paced: GameServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(address(paced)) as ch:
        yield ch


def _seats(human: Player | None, bots: int) -> list[tables_pb2.SeatedPlayer]:
    seats = [] if human is None else [tables_pb2.SeatedPlayer(player_id=human.player_id)]
    return seats + [
        tables_pb2.SeatedPlayer(player_id=f"bot-{i}", display_name=f"Bot {i}", is_bot=True)
        for i in range(bots)
    ]


async def _create(channel: grpc.aio.Channel, **fields: object) -> str:
    reply = await tables_pb2_grpc.TableServiceStub(channel).CreateTable(
        tables_pb2.CreateTableRequest(**{"ruleset": "cafe", **fields}),  # type: ignore[arg-type]
        metadata=service_auth(),
    )
    return str(reply.table_id)


def _ms(event: table_pb2.TableEvent) -> int:
    return event.occurred_at.ToMilliseconds()


async def _bot_turn(watcher: Watcher, seat: int) -> list[table_pb2.TableEvent]:
    """The events of ``seat``'s next turn, its TurnStarted first, the next seat's last."""
    start = await watcher.until(
        lambda e: e.kind == table_pb2.EVENT_KIND_TURN_STARTED and e.seat == seat
    )
    turn = [start]
    while True:
        # A presence event (a watcher arriving) is no move of the bot's: skipped.
        event = await watcher.until(lambda e: not_presence(e.kind))
        turn.append(event)
        if event.kind == table_pb2.EVENT_KIND_TURN_STARTED:
            return turn


async def test_a_bot_plays_one_action_per_due_time_where_a_person_plays(
    paced_channel: grpc.aio.Channel,
) -> None:
    human = await login(paced_channel, "Human")
    table_id = await _create(
        paced_channel,
        options=table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS),
        players=_seats(human, 1),
        deck_order=scripted_order([HUMAN, BOT], "KC", "2S 5D"),
        bot_level=table_pb2.BOT_LEVEL_STRONG,
    )
    watcher = human.watch(table_id)
    await human.send(table_id, DrawStock())
    drawn = [c.id for c in (await human.view(table_id)).hand if c.code == "2S"]
    await human.send(table_id, Discard(drawn[0]))
    turn = await _bot_turn(watcher, 1)
    kinds = [e.kind for e in turn]
    assert kinds[1] == table_pb2.EVENT_KIND_DREW, kinds
    assert table_pb2.EVENT_KIND_MELDED in kinds and table_pb2.EVENT_KIND_DISCARDED in kinds
    # Each action its own commit: the draw, the meld (both melds in one action), the discard.
    moves = [e for e in turn if e.kind != table_pb2.EVENT_KIND_TURN_STARTED]
    versions = sorted({e.version for e in moves})
    assert len(versions) == 3, [(e.kind, e.version) for e in turn]
    first = {v: min(_ms(e) for e in moves if e.version == v) for v in versions}
    gaps = [first[versions[0]] - _ms(turn[0])]
    gaps += [first[b] - first[a] for a, b in itertools.pairwise(versions)]
    assert DRAW_THINK_MS[0] * PACE <= gaps[0] <= DRAW_THINK_MS[1] * PACE + 1000, gaps
    for gap in gaps[1:]:
        assert PLAY_THINK_MS[0] * PACE <= gap <= PLAY_THINK_MS[1] * PACE + 1000, gaps


async def test_a_table_of_bots_alone_plays_each_turn_whole(
    paced_channel: grpc.aio.Channel,
) -> None:
    spectator = await login(paced_channel, "Spectator")
    table_id = await _create(
        paced_channel,
        options=table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS),
        players=_seats(None, 2),
        deck_order=scripted_order([HUMAN, BOT], "KC", "2S 5D"),
    )
    watcher = spectator.watch(table_id)
    for seat in (0, 1):
        turn = await _bot_turn(watcher, seat)
        assert len({e.version for e in turn[1:]}) == 1, [(e.kind, e.version) for e in turn]


async def test_a_paced_bot_hurries_rather_than_lose_its_turn_to_a_short_timer(
    fresh_dsn: str,
) -> None:
    """At a person's full pace the bot would think 1.5 s or more before each of
    its three actions; with a 3 s timer it thinks less, and its turn still ends
    with its own discard, not the clock's."""
    srv = await start_server(fresh_dsn, bot_pace=1.0)
    try:
        async with grpc.aio.insecure_channel(address(srv)) as channel:
            human = await login(channel, "Human")
            table_id = await _create(
                channel,
                options=table_pb2.TableOptions(turn_timer_ms=3000),
                players=_seats(human, 1),
                deck_order=scripted_order([HUMAN, BOT], "KC", "2S 5D"),
                bot_level=table_pb2.BOT_LEVEL_STRONG,
            )
            watcher = human.watch(table_id)
            await human.send(table_id, DrawStock())
            drawn = [c.id for c in (await human.view(table_id)).hand if c.code == "2S"]
            await human.send(table_id, Discard(drawn[0]))
            turn = await _bot_turn(watcher, 1)
    finally:
        await srv.stop(0)
    kinds = [e.kind for e in turn]
    assert table_pb2.EVENT_KIND_MELDED in kinds and table_pb2.EVENT_KIND_TURN_PASSED not in kinds
    discard = next(e for e in turn if e.kind == table_pb2.EVENT_KIND_DISCARDED)
    assert not discard.discarded.automatic
    assert len({e.version for e in turn[1:-1]}) == 3


@pytest.mark.parametrize(
    ("asked", "people", "shown"),
    [
        (table_pb2.BOT_LEVEL_EASY, 1, table_pb2.BOT_LEVEL_EASY),
        (table_pb2.BOT_LEVEL_STRONG, 1, table_pb2.BOT_LEVEL_STRONG),
        (table_pb2.BOT_LEVEL_UNSPECIFIED, 1, table_pb2.BOT_LEVEL_NORMAL),
        (table_pb2.BOT_LEVEL_UNSPECIFIED, 0, table_pb2.BOT_LEVEL_STRONG),
    ],
)
async def test_the_level_asked_for_shows_on_every_bot_seat(
    channel: grpc.aio.Channel, asked: int, people: int, shown: int
) -> None:
    viewer = await login(channel, "Viewer")
    table_id = await _create(
        channel, players=_seats(viewer if people else None, 3 - people), bot_level=asked
    )
    view = await viewer.view(table_id)
    levels = [s.bot_level for s in view.seats]
    people_levels = [table_pb2.BOT_LEVEL_UNSPECIFIED] * people
    assert levels == people_levels + [shown] * (3 - people)


async def test_an_unknown_bot_level_is_refused(channel: grpc.aio.Channel) -> None:
    human = await login(channel, "Human")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _create(channel, players=_seats(human, 1), bot_level=7)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    info = error_info(refused.value)
    assert info is not None and info.reason == "BOT_LEVEL_UNKNOWN"


async def test_a_paced_bot_waits_for_its_claim_window_to_close_then_thinks(
    paced_channel: grpc.aio.Channel,
) -> None:
    """`contract`'s "Puis-je ?": the bot (first to play) draws from the stock,
    which opens a window on the QD turned up at the deal; the person claims it. The
    window closes at its time, in a commit of its own, and only a think time later
    does the bot discard. (A person may not claim back a card of their own.)"""
    human = await login(paced_channel, "Human")
    table_id = await _create(
        paced_channel,
        ruleset="contract",
        options=table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS, claim_window_ms=500),
        players=[*_seats(None, 1), *_seats(human, 0)],
        deck_order=scripted_order(HANDS[:2], "QD", "KS 5C", ruleset=CONTRACT),
        bot_level=table_pb2.BOT_LEVEL_STRONG,
    )
    watcher = human.watch(table_id)
    opened = await watcher.until(lambda e: e.kind == table_pb2.EVENT_KIND_CLAIM_WINDOW_OPENED)
    queen = opened.claim_window_opened.card.id
    await human.send(table_id, Claim(queen))
    closed = await watcher.until(lambda e: e.kind == table_pb2.EVENT_KIND_CLAIMED)
    assert closed.seat == 1 and closed.claimed.card.id == queen
    assert _ms(closed) >= opened.claim_window_opened.closes_at.ToMilliseconds()
    discarded = await watcher.until(lambda e: e.kind == table_pb2.EVENT_KIND_DISCARDED)
    assert discarded.seat == 0 and discarded.version > closed.version
    assert _ms(discarded) - _ms(closed) >= PLAY_THINK_MS[0] * PACE
