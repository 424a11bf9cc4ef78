"""Tables of six through the game service: seed 002 plays « de 2 à 6 joueurs »,
seed 004 « quatre à six » with a third pack and a second joker. The view, the
events, the hints, the clock and the verified shuffle at six seats."""

from __future__ import annotations

import random

import grpc

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game.rules.fairness import verify_deck
from services.game.rules.ruleset import CONTRACT

from .harness import LONG_TURNS_MS, create_table, kind_is, login, play_to_end

SIX = CONTRACT.for_seats(6)


async def test_a_six_seat_contract_table_deals_158_cards_and_reveals_each_deck(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, f"S{i}") for i in range(6)]
    deck = list(SIX.deck.ids())
    random.Random(6).shuffle(deck)
    table_id = await create_table(
        channel, players, deck_order=deck, ruleset="contract", turn_timer_ms=LONG_TURNS_MS
    )
    view = await players[5].view(table_id)
    assert len(view.seats) == 6 and view.my_seat == 5
    assert len(view.hand) == 10 and view.stock_size == 158 - 61
    # Cards of the third pack and the second joker carry their own ids and codes.
    assert all(c.code == SIX.deck.code(c.id) for c in view.hand)
    hint = await players[0].call("GetHint", game_pb2.GetHintRequest(table_id=table_id))
    assert isinstance(hint, game_pb2.GetHintResponse)
    await play_to_end(players, table_id, max_turns=7 * 120 + 7)
    events = await players[0].watch(table_id, 0).to_end()
    commitments = {e.dealt.round: e.dealt.deck_commitment for e in events if e.HasField("dealt")}
    revealed = [e.deck_revealed for e in events if e.HasField("deck_revealed")]
    assert [r.round for r in revealed] == list(range(1, 8))
    for r in revealed:
        assert sorted(r.order) == list(range(158))
        assert verify_deck(r.order, r.seed, r.salt, commitments[r.round])
    assert list(revealed[0].order) == deck


async def test_the_clock_passes_each_of_six_turns_in_play_order(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, f"T{i}") for i in range(6)]
    table_id = await create_table(channel, players, ruleset="classic", turn_timer_ms=200)
    watcher = players[0].watch(table_id, 0)
    try:
        started = []
        while len(started) < 7:
            event = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_STARTED), timeout=20)
            started.append(event.seat)
        assert started == [0, 1, 2, 3, 4, 5, 0]
        passed = [e.seat for e in watcher.events if e.HasField("turn_passed")]
        assert passed == [0, 1, 2, 3, 4, 5]
    finally:
        watcher.cancel()
