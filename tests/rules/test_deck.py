"""RULES.md §2, rows `deck`, `players` and `deal`."""

from __future__ import annotations

from collections import Counter

import pytest

from services.game.rules import (
    SYSTEM,
    CardParseError,
    Deal,
    Phase,
    Reason,
    RuleError,
    TableOptions,
    apply,
    new_game,
    parse_card,
    parse_cards,
    parse_code,
)
from services.game.rules.events import Drew, RoundDealt, TurnBegan

from .helpers import CAFE, Table, codes, deck_order

HAND_A = "AS 3S 5S 7S 9S JS KS 2H 4H 6H 8H TH QH"
HAND_B = "AD 3D 5D 7D 9D JD KD 2C 4C 6C 8C TC QC"
HAND_C = "2S 4S 6S 8S TS QS AH 3H 5H 7H 9H JH KH"
HAND_D = "2D 4D 6D 8D TD QD AC 3C 5C 7C 9C JC KC"


def test_deck_has_110_cards_two_packs_and_six_jokers_each_with_its_own_id() -> None:
    deck = CAFE.deck
    ids = list(deck.ids())
    assert deck.size == len(ids) == len(set(ids)) == 110
    by_code = Counter(deck.code(c) for c in ids)
    assert by_code.pop("JK") == 6
    assert len(by_code) == 52
    assert set(by_code.values()) == {2}, "every natural card exists exactly twice"
    # The two 7S are two physical cards: distinct ids that print alike.
    first, second = deck.ids_of("7S")
    assert first != second and deck.code(first) == deck.code(second) == "7S"


def test_notation_parses_and_prints_every_card() -> None:
    deck = CAFE.deck
    for card in deck.ids():
        assert card in deck.ids_of(deck.code(card))
    assert parse_code("10s") == parse_code("TS") == parse_code("T♠")
    assert parse_code("joker") == parse_code("JK")
    assert codes(parse_cards("7S 7S JK", CAFE)) == "7S 7S JK"
    assert parse_card("7S", CAFE, copy=1) != parse_card("7S", CAFE)
    for bad in ("", "1S", "7X", "77S", "ZZ"):
        with pytest.raises(CardParseError):
            parse_code(bad)
    with pytest.raises(CardParseError):
        parse_cards("7S 7S 7S", CAFE)


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_players_two_three_or_four_can_sit_and_are_dealt(seats: int) -> None:
    state = new_game(CAFE, seats)
    order = deck_order([HAND_A, HAND_B, HAND_C, HAND_D][:seats], "JK")
    state, _ = apply(state, SYSTEM, Deal(order, 1), 0)
    assert [len(h) for h in state.hands] == [13] * seats
    assert len(state.stock) == 110 - 13 * seats - 1


@pytest.mark.parametrize("seats", [0, 1, 5, 6])
def test_players_fewer_than_two_or_more_than_four_are_refused(seats: int) -> None:
    with pytest.raises(ValueError, match="2 to 4"):
        new_game(CAFE, seats)


def test_deal_thirteen_each_one_at_a_time_then_a_turned_discard() -> None:
    state = new_game(CAFE, 3)
    order = tuple(range(110))[::-1]  # any permutation: the last id on top
    state, events = apply(state, SYSTEM, Deal(order, 7), 0)
    # Seat 0 is left of the dealer (seat 2): it gets cards 1, 4, 7, ... of the order.
    for seat in range(3):
        assert state.hands[seat] == list(order[seat:39:3])
    assert state.discard == [order[39]], "the 40th card starts the discard pile"
    assert state.stock[-1] == order[40], "the next card is the top of the stock"
    assert len(state.stock) == 110 - 40
    dealt = events[0]
    assert isinstance(dealt, RoundDealt)
    assert dealt.discard_top == order[39] and dealt.stock_size == 70


def test_deal_first_player_is_left_of_the_dealer_and_draws_normally() -> None:
    table = Table([HAND_A, HAND_B], "JK", "5C")
    state = table.state
    assert state.dealer == 1 and state.current == 0 and state.phase == Phase.DRAW
    assert isinstance(table.events[-1], TurnBegan) and table.events[-1].seat == 0
    # No 14th card, no discard without a draw: the first player draws as any other.
    assert table.refuse(0, table.meld_action(0, "AS 3S 5S")).reason == Reason.MUST_DRAW_FIRST
    table.draw(0)
    drew = table.events[0]
    assert isinstance(drew, Drew) and codes([drew.card]) == "5C" and not drew.from_discard
    assert len(state.hands[0]) == 13 and len(table.state.hands[0]) == 14


def test_deal_of_a_later_round_starts_left_of_the_next_dealer() -> None:
    table = Table([HAND_A, HAND_B, HAND_C], "JK", options=TableOptions(rounds=2, turn_cap=1))
    table.pass_turns(1)  # the one-turn round ends at its cap
    assert table.state.phase == Phase.DEAL and table.state.dealer == 0
    order = tuple(range(110))
    table.act(SYSTEM, Deal(order, 3))
    # Seat 1 sits left of dealer 0: it gets the first card and plays first.
    state = table.state
    assert state.hands[1] == list(order[0:39:3])
    assert state.hands[2] == list(order[1:39:3])
    assert state.hands[0] == list(order[2:39:3])
    assert state.current == 1 and state.round_no == 2


def test_deal_refuses_a_deck_that_is_not_every_card_once() -> None:
    state = new_game(CAFE, 2)
    order = list(deck_order([HAND_A, HAND_B], "JK"))
    for bad in (order[:-1], [*order[:-1], order[0]], [*order, 110]):
        with pytest.raises(RuleError) as caught:
            apply(state, SYSTEM, Deal(tuple(bad), 0), 0)
        assert caught.value.reason == Reason.DECK_INVALID
    with pytest.raises(RuleError) as caught:
        apply(state, 0, Deal(tuple(order), 0), 0)
    assert caught.value.reason == Reason.NOT_YOUR_TURN
