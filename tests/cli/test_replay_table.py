"""A replay folded into the table after each event (`replay_table.steps`): in every
rule set it ends where the engine ended (the state the game service stored), no
card is lost or made on the way, and the moves greedy players do not make
(claims, a put-back discard, a reshuffle, a timed-out turn, a swap) move the
cards the events say."""

from __future__ import annotations

import random
from collections.abc import Sequence

import asyncpg
import grpc
import pytest

from clients.cli.cards import Style
from clients.cli.deckcheck import check_deals
from clients.cli.replay_table import Step, steps
from services.common.pb.rummy.v1 import cards_pb2, player_pb2, table_pb2
from services.game.rules import preset, serial
from tests.game.harness import address, create_table, login, play_to_end, start_server
from tests.game.player_calls import whole_replay

PLAIN = Style(False)


def deck(ruleset: str, seats: int, seed: int) -> list[int]:
    order = list(preset(ruleset).for_seats(seats).deck.ids())
    random.Random(seed).shuffle(order)
    return order


def held(step: Step) -> int:
    """Cards in the hands, on the table, on the pile and in the stock."""
    view = step.view
    hands = sum(
        len(h) if h is not None else s.card_count
        for h, s in zip(step.hands, view.seats, strict=True)
    )
    return hands + sum(len(m.cards) for m in view.melds) + len(view.discard_pile) + view.stock_size


@pytest.mark.parametrize(
    ("ruleset", "seats", "seed", "options"),
    [
        ("cafe", 3, 5, {"rounds": 2}),  # joker swaps, lay-offs
        ("rami51", 2, 3, {"rounds": 2}),
        ("classic", 3, 5, {"turn_cap": 12, "elimination_cap": 60, "buy_backs": 1}),
        ("contract", 3, 6, {"turn_cap": 9}),  # claim windows, seven deals
    ],
)
async def test_a_replay_folds_into_the_state_the_engine_ended_in(
    fresh_dsn: str, ruleset: str, seats: int, seed: int, options: dict[str, int]
) -> None:
    server = await start_server(fresh_dsn)
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            players = [await login(channel, f"P{i}") for i in range(seats)]
            order = deck(ruleset, seats, seed)
            table_id = await create_table(
                channel, players, deck_order=order, ruleset=ruleset, **options
            )
            await play_to_end(players, table_id)
            first, events = await whole_replay(players[1], table_id)
            outsider = await login(channel, "Outsider")
            watched, watched_events = await whole_replay(outsider, table_id)
    finally:
        await server.stop(0)
    checks = check_deals(first.deals, events)
    assert checks and all(c.verified for c in checks)
    made = steps(first, events, PLAIN, checks)
    assert [s.number for s in made] == list(range(1, len(made) + 1))
    for step in made:
        if step.view.round:
            assert held(step) == len(order), step
            assert [len(h or ()) for h in step.hands] == [s.card_count for s in step.view.seats]

    con = await asyncpg.connect(fresh_dsn)
    try:
        stored = await con.fetchval("SELECT state FROM tables WHERE id = $1", table_id)
    finally:
        await con.close()
    state = serial.loads(stored)
    last = made[-1]
    assert [sorted(c.id for c in h or ()) for h in last.hands] == [sorted(h) for h in state.hands]
    assert {m.id: [c.id for c in m.cards] for m in last.view.melds} == {
        m.id: list(m.cards) for m in state.melds
    }
    assert [c.id for c in last.view.discard_pile] == state.discard
    assert last.view.stock_size == len(state.stock)
    assert [s.score_total for s in last.view.seats] == state.totals
    assert last.view.phase == table_pb2.PHASE_GAME_OVER

    # A spectator's replay: the same table, hands as counts only.
    seen = steps(watched, watched_events, PLAIN)
    assert len(seen) == len(made)
    for mine, theirs in zip(made, seen, strict=True):
        assert all(h is None for h in theirs.hands)
        assert theirs.view.melds == mine.view.melds
        assert [s.card_count for s in theirs.view.seats] == [s.card_count for s in mine.view.seats]


# --- moves the greedy players never make, told as events ----------------------------

CODES = ["7S", "8S", "9S", "2H", "3H", "4H", "KD", "QD", "JD", "5C", "6C", "JK", "AS", "AH"]


def card(n: int) -> cards_pb2.Card:
    return cards_pb2.Card(id=n, code=CODES[n])


def cards(*ids: int) -> list[cards_pb2.Card]:
    return [card(n) for n in ids]


def replay_of(ruleset: str, *, shown: bool = True) -> player_pb2.GetReplayResponse:
    seats = [player_pb2.GameSeat(seat=s, display_name=n) for s, n in enumerate(["Ann", "Bob"])]
    replay = player_pb2.GetReplayResponse(
        table_id="t", ruleset=ruleset, seats=seats, hands_shown=shown
    )
    if shown:
        replay.my_seat = 0
    return replay


def dealt(shown: bool = True) -> table_pb2.TableEvent:
    """Ann holds 0 1 2 3, Bob 4 5 6 7; 11 on the pile; 8 9 10 12 13 in the stock."""
    hands = [
        table_pb2.DealtHand(cards=cards(0, 1, 2, 3)),
        table_pb2.DealtHand(cards=cards(4, 5, 6, 7)),
    ]
    return table_pb2.TableEvent(
        seq=1,
        dealt=table_pb2.Dealt(
            round=1,
            hand_sizes=[4, 4],
            hand=cards(0, 1, 2, 3),
            hands=hands if shown else [],
            discard_top=card(11),
            stock_size=5,
        ),
    )


def told(*moves: tuple[int | None, table_pb2.TableEvent]) -> list[table_pb2.TableEvent]:
    """The deal, then each (seat, event), numbered."""
    events = [dealt()]
    for seq, (seat, event) in enumerate(moves, start=2):
        event.seq = seq
        if seat is not None:
            event.seat = seat
        events.append(event)
    return events


def ids(hand: Sequence[cards_pb2.Card] | None) -> list[int]:
    assert hand is not None
    return [c.id for c in hand]


def test_a_claim_takes_the_discard_and_penalty_cards_from_the_stock() -> None:
    events = told(
        (0, table_pb2.TableEvent(turn_started=table_pb2.TurnStarted(turn=1))),
        (0, table_pb2.TableEvent(drew=table_pb2.Drew(card=card(8), stock_size=4))),
        (
            None,
            table_pb2.TableEvent(claim_window_opened=table_pb2.ClaimWindowOpened(card=card(11))),
        ),
        (1, table_pb2.TableEvent(claim_made=table_pb2.ClaimMade())),
        (
            1,
            table_pb2.TableEvent(
                claimed=table_pb2.Claimed(card=card(11), penalty_count=1, penalty_cards=cards(9))
            ),
        ),
        (0, table_pb2.TableEvent(discarded=table_pb2.Discarded(card=card(0)))),
    )
    made = steps(replay_of("contract"), events, PLAIN)
    claimed = made[5]
    assert ids(claimed.hands[1]) == [4, 5, 6, 7, 11, 9]
    assert claimed.view.stock_size == 3 and not claimed.view.discard_pile
    assert not claimed.view.HasField("claim_window")
    assert claimed.sentence.startswith("Bob got the J")
    last = made[-1]
    assert ids(last.hands[0]) == [1, 2, 3, 8] and ids(last.view.discard_pile) == [0]
    assert all(held(s) == 14 for s in made)


@pytest.mark.parametrize(("ruleset", "back"), [("classic", True), ("cafe", False)])
def test_a_timed_out_turn_puts_back_a_discard_that_had_to_be_used(ruleset: str, back: bool) -> None:
    events = told(
        (0, table_pb2.TableEvent(turn_started=table_pb2.TurnStarted(turn=1))),
        (0, table_pb2.TableEvent(took_discard=table_pb2.TookDiscard(card=card(11)))),
        (
            0,
            table_pb2.TableEvent(
                turn_passed=table_pb2.TurnPassed(reason=table_pb2.TURN_PASSED_REASON_TIMED_OUT)
            ),
        ),
    )
    last = steps(replay_of(ruleset), events, PLAIN)[-1]
    assert ids(last.hands[0]) == ([0, 1, 2, 3] if back else [0, 1, 2, 3, 11])
    assert ids(last.view.discard_pile) == ([11] if back else [])


def test_a_put_back_discard_and_a_reshuffle() -> None:
    events = told(
        (0, table_pb2.TableEvent(turn_started=table_pb2.TurnStarted(turn=1))),
        (0, table_pb2.TableEvent(took_discard=table_pb2.TookDiscard(card=card(11)))),
        (0, table_pb2.TableEvent(reposed=table_pb2.Reposed(card=card(11)))),
        (0, table_pb2.TableEvent(drew=table_pb2.Drew(card=card(8), stock_size=4))),
        (0, table_pb2.TableEvent(discarded=table_pb2.Discarded(card=card(0)))),
        (
            None,
            table_pb2.TableEvent(
                reshuffled=table_pb2.Reshuffled(stock_size=5, discard_top=card(0), count=1)
            ),
        ),
        (1, table_pb2.TableEvent(player_left=table_pb2.PlayerLeft())),
    )
    made = steps(replay_of("rami51"), events, PLAIN)
    assert ids(made[3].hands[0]) == [0, 1, 2, 3] and ids(made[3].view.discard_pile) == [11]
    assert ids(made[5].view.discard_pile) == [11, 0]
    assert made[6].view.stock_size == 5 and ids(made[6].view.discard_pile) == [0]
    assert made[7].view.seats[1].status == table_pb2.SEAT_STATUS_LEFT
    assert all(held(s) == 14 for s in made)


def meld(meld_id: int, owner: int, *card_ids: int) -> table_pb2.MeldView:
    return table_pb2.MeldView(
        id=meld_id, owner_seat=owner, kind=table_pb2.MELD_KIND_RUN, cards=cards(*card_ids)
    )


@pytest.mark.parametrize("shown", [True, False])
def test_a_joker_swap_moves_each_card_once_seen_or_not(shown: bool) -> None:
    """Bob lays the joker in 2♥ 3♥ 4♥; Ann takes it with her 2♥ and lays it off on
    her 7♠ 8♠ 9♠, a move the log tells twice (the swap, then the lay-off)."""
    laid = meld(2, 0, 0, 1, 2, 11)
    swap = table_pb2.JokerSwapped(
        joker=card(11), replacements=cards(3), meld=meld(1, 1, 3, 4, 5), placed_in=laid
    )
    events = told(
        (1, table_pb2.TableEvent(took_discard=table_pb2.TookDiscard(card=card(11)))),
        (1, table_pb2.TableEvent(melded=table_pb2.Melded(melds=[meld(1, 1, 11, 4, 5)]))),
        (0, table_pb2.TableEvent(melded=table_pb2.Melded(melds=[meld(2, 0, 0, 1, 2)]))),
        (0, table_pb2.TableEvent(joker_swapped=swap)),
        (0, table_pb2.TableEvent(laid_off=table_pb2.LaidOff(cards=cards(11), meld=laid))),
    )
    if not shown:
        events[0].dealt.ClearField("hands")
        events[0].dealt.ClearField("hand")
    made = steps(replay_of("cafe", shown=shown), events, PLAIN)
    last = made[-1]
    assert [ids(m.cards) for m in last.view.melds] == [[3, 4, 5], [0, 1, 2, 11]]
    assert [s.card_count for s in last.view.seats] == [0, 2]
    assert all(held(s) == 14 for s in made)
    if shown:
        assert [ids(h) for h in last.hands] == [[], [6, 7]]
        assert "took the joker from [1], putting in 2" in made[4].sentence
