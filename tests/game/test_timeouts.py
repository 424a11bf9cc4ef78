"""Turn timers through table options: a turn not drawn in time passes, one drawn
and not finished ends with an automatic discard that is never a joker, each
timeout fires once however many replicas sweep, and a game nobody plays ends at
the turn cap."""

from __future__ import annotations

import asyncio

import asyncpg
import grpc

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules import events as ev
from services.game.rules.actions import DrawStock, TakeDiscard
from services.game.rules.ruleset import CAFE, CLASSIC
from services.game.rules.scoring import card_penalty
from services.game.server import GameServer

from ..rules.helpers import deck_order as scripted_order
from ..rules.test_rulesets_clock import HANDS as CLOCK_HANDS
from .harness import (
    JOKERS,
    LONG_TURNS_MS,
    WAIT_S,
    Player,
    card,
    create_table,
    deck_order,
    kind_is,
    login,
    refused,
)
from .stored import not_presence, table_db

TIMED_OUT = table_pb2.TURN_PASSED_REASON_TIMED_OUT


async def test_a_turn_not_drawn_in_time_passes(channel: grpc.aio.Channel, fresh_dsn: str) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    table_id = await create_table(channel, players, turn_timer_ms=200)
    view = await players[0].view(table_id)
    assert view.options.turn_timer_ms == 200
    # A countdown from the view is at most the timer, whatever the phone's clock.
    assert view.turn_deadline.ToMilliseconds() - view.server_time.ToMilliseconds() <= 200

    watcher = players[1].watch(table_id)
    passed = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_PASSED))
    assert (passed.seat, passed.turn_passed.reason) == (0, TIMED_OUT)
    began = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_STARTED))
    assert (began.seat, began.turn_started.turn, began.version) == (1, 2, passed.version)
    watcher.cancel()

    # Seat 0 never drew: its hand is as dealt, and the log shows only the pass.
    assert len((await players[0].view(table_id)).hand) == CAFE.hand_size
    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    assert [type(x.event) for x in log if not_presence(x.kind)][:4] == [
        ev.RoundDealt,
        ev.TurnBegan,
        ev.TurnPassed,
        ev.TurnBegan,
    ]
    assert not any(isinstance(x.event, ev.Drew | ev.Discarded) for x in log)


async def test_the_automatic_discard_after_the_draw_is_never_a_joker(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    # Seat 0 holds all six jokers: the costliest cards in hand, never to be thrown.
    naturals = [card(c) for c in ("2S", "3S", "4H", "5H", "6D", "7D", "9C")]
    order = deck_order(
        2, {0: [*JOKERS, *naturals]}, stock=[card("2C"), card("3C"), card("4C"), card("5C")]
    )
    players = [await login(channel, f"P{i}") for i in range(2)]
    table_id = await create_table(channel, players, deck_order=order, turn_timer_ms=300)
    me = players[0]
    watcher = me.watch(table_id)
    # Draw from the stock; then take back the card just thrown (never re-thrown);
    # then draw again. Each turn the timer runs out before the discard.
    plan = [DrawStock(), TakeDiscard(), DrawStock()]
    thrown: list[int] = []
    async with asyncio.timeout(WAIT_S):
        while plan:
            began = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_STARTED, seat=0))
            try:
                reply = await me.send(table_id, plan[0], expected_version=began.version)
            except grpc.aio.AioRpcError:
                # This turn timed out before the draw arrived: try again next turn.
                continue
            hand = [c.id for c in reply.view.hand]
            taken = reply.view.taken_discard_id if reply.view.HasField("taken_discard_id") else -1
            drawn = reply.card.id if isinstance(plan.pop(0), DrawStock) else taken
            done = await watcher.until(kind_is(table_pb2.EVENT_KIND_DISCARDED, seat=0))
            assert done.discarded.automatic
            choices = [c for c in hand if c not in JOKERS and c != taken]
            # RULES.md: the costliest card; ties to the card drawn, then the lowest id.
            best = max(choices, key=lambda c: (card_penalty(c, CAFE), c == drawn, -c))
            assert done.discarded.card.id == best
            thrown.append(best)
    watcher.cancel()

    # 9C, then 7D (9C was taken back, so it stays), then 9C again.
    assert thrown == [card("9C"), card("7D"), card("9C")]
    assert set(JOKERS) <= {c.id for c in (await me.view(table_id)).hand}
    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    automatic = [x.event for x in log if isinstance(x.event, ev.Discarded)]
    assert automatic and all(d.automatic and d.card not in JOKERS for d in automatic)


async def test_two_sweeping_replicas_fire_each_timeout_once(
    replicas: list[GameServer], channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    a, b = channels
    cap = 12
    players = [await login(a, f"P{i}") for i in range(3)]
    table_id = await create_table(a, players, turn_timer_ms=100, turn_cap=cap)
    on_b = Player(b, players[0].token, players[0].player_id, "P0 on B")
    watcher = on_b.watch(table_id)
    # Both replicas sweep for a while; then the one that created the table stops
    # and the other carries the game to its end alone.
    await watcher.until(
        lambda e: e.kind == table_pb2.EVENT_KIND_TURN_STARTED and e.turn_started.turn == 5
    )
    await replicas[0].stop(0)
    events = await watcher.to_end()
    assert events[-1].kind == table_pb2.EVENT_KIND_GAME_ENDED

    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    began = [x for x in log if isinstance(x.event, ev.TurnBegan)]
    passed = [x for x in log if isinstance(x.event, ev.TurnPassed)]
    assert [x.event.turn for x in began] == list(range(1, cap + 1))
    assert [x.event.seat for x in passed] == [t % 3 for t in range(cap)]
    assert all(x.event.reason == "timeout" for x in passed)
    # One timeout, one version: none fired twice, none was skipped.
    assert [x.version for x in passed] == list(range(2, cap + 2))
    assert len(log) == len({x.seq for x in log}) == log[-1].seq
    ended = [x.event for x in log if isinstance(x.event, ev.RoundEnded)]
    assert [e.reason for e in ended] == [ev.EndReason.TURN_CAP]


async def test_a_game_driven_only_by_timeouts_ends_at_the_turn_cap(
    channel: grpc.aio.Channel,
) -> None:
    low = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "2H", "3H", "4H", "5H"]
    high = ["KS", "QS", "JS", "KH", "QH", "JH", "KD", "QD", "JD", "KC", "QC", "JC", "AS"]
    order = deck_order(2, {0: [card(c) for c in low], 1: [card(c) for c in high]})
    players = [await login(channel, f"P{i}") for i in range(2)]
    table_id = await create_table(channel, players, deck_order=order, turn_timer_ms=100, turn_cap=6)
    events = await players[1].watch(table_id).to_end()

    kinds = [e.kind for e in events]
    assert kinds.count(table_pb2.EVENT_KIND_TURN_PASSED) == 6
    assert table_pb2.EVENT_KIND_DREW not in kinds
    round_end = next(e for e in events if e.kind == table_pb2.EVENT_KIND_ROUND_ENDED)
    result = round_end.round_ended.result
    assert result.end_reason == table_pb2.END_REASON_TURN_CAP
    # Nobody drew: the lightest hand as dealt wins; the other pays its hand (12 x 10 + 11).
    assert result.winner_seat == 0
    assert [(s.seat, s.points, s.total) for s in result.scores] == [(0, 0, 0), (1, 131, 131)]
    game_end = events[-1]
    assert game_end.kind == table_pb2.EVENT_KIND_GAME_ENDED
    assert game_end.game_ended.winner_seat == 0
    view = await players[0].view(table_id)
    assert view.phase == table_pb2.PHASE_GAME_OVER
    assert view.turn == 6
    assert [r.end_reason for r in view.round_results] == [table_pb2.END_REASON_TURN_CAP]


IDLE_S = 5.0


async def test_an_idle_replica_only_asks_when_the_next_turn_is_due(
    server: GameServer, channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """Between due turns the sweeper sends one indexed read per interval (or sleeps
    until the turn falls due); it opens no claiming transaction. Three sweep loops
    each claiming every 50 ms made nearly three transactions an interval."""
    players = [await login(channel, f"P{i}") for i in range(2)]
    await create_table(channel, players, turn_timer_ms=3_600_000)  # a live, idle table
    con = await asyncpg.connect(fresh_dsn)
    try:
        commits = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        before = await con.fetchval(commits)
        await asyncio.sleep(IDLE_S)
        await con.execute("SELECT pg_stat_clear_snapshot()")
        after = await con.fetchval(commits)
    finally:
        await con.close()
    intervals = IDLE_S / server.config.sweep_interval
    # Ours included: the two reads above. Statistics may lag by a second.
    assert (after - before) / intervals < 1.5, f"{after - before} commits in {IDLE_S} s"


async def test_a_classic_take_that_could_not_be_used_is_refused_and_the_turn_goes_on(
    channel: grpc.aio.Channel,
) -> None:
    """`classic`: the KH taken from the discard pile would have to be used this
    turn, and this hand cannot use it: taken, it would leave the seat no move (no
    discard allowed before, no put-back) until its hour-long clock ran out. The
    take is refused instead, and the seat draws from the stock."""
    players = [await login(channel, f"P{i}") for i in range(2)]
    order = scripted_order(CLOCK_HANDS["classic"], "KH", ruleset=CLASSIC)
    table_id = await create_table(
        channel, players, deck_order=order, ruleset="classic", turn_timer_ms=LONG_TURNS_MS
    )
    before = await players[0].view(table_id)
    assert await refused(players[0].send(table_id, TakeDiscard())) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "DISCARD_UNUSABLE",
    )
    after = await players[0].view(table_id)
    assert (after.version, after.discard_top.id) == (before.version, before.discard_top.id)
    assert after.turn_deadline == before.turn_deadline
    drew = await players[0].send(table_id, DrawStock())
    assert drew.view.phase == table_pb2.PHASE_PLAY
