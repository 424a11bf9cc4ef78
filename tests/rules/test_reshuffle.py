"""RULES.md §2 row `stock exhausted`: the discard pile minus its top card is
shuffled into a new stock, the top card stays visible; no limit."""

from __future__ import annotations

from services.game.rules import TableOptions
from services.game.rules.events import Drew, Reshuffled

from .helpers import Table, assert_conserved

HAND_A = "AS 3S 5S 7S 9S JS KS 2H 4H 6H 8H TH QH"
HAND_B = "AD 3D 5D 7D 9D JD KD 2C 4C 6C 8C TC QC"


def draw_and_throw(table: Table) -> None:
    """The current seat draws from the stock and throws a non-joker card back."""
    seat = table.state.current
    events = table.draw(seat)
    drew = next(e for e in events if isinstance(e, Drew))
    card = drew.card
    if table.deck.is_joker(card):
        card = next(c for c in table.state.hands[seat] if not table.deck.is_joker(c))
    table.act(seat, table.discard_action(seat, table.deck.code(card)))


def exhaust_stock(table: Table) -> None:
    while table.state.stock:
        draw_and_throw(table)
        assert_conserved(table.state)


def test_stock_exhausted_discard_pile_minus_top_becomes_the_new_stock() -> None:
    table = Table([HAND_A, HAND_B], "JK", options=TableOptions(turn_cap=1000), seed=11)
    exhaust_stock(table)
    pile = list(table.state.discard)
    assert len(pile) == 110 - 26
    top = pile[-1]
    seat = table.state.current
    events = table.draw(seat)
    reshuffled, drew = events
    assert isinstance(reshuffled, Reshuffled) and isinstance(drew, Drew)
    assert reshuffled.discard_top == top and reshuffled.stock_size == len(pile) - 1
    state = table.state
    assert state.discard == [top], "the top card stays, face up"
    assert sorted([*state.stock, drew.card]) == sorted(pile[:-1])
    assert [*state.stock, drew.card] != pile[:-1], "the new stock is shuffled"
    assert drew.stock_size == len(pile) - 2
    assert_conserved(state)


def test_stock_exhausted_reshuffles_have_no_limit() -> None:
    table = Table([HAND_A, HAND_B], "JK", options=TableOptions(turn_cap=1000), seed=5)
    for round_trip in range(1, 4):
        exhaust_stock(table)
        draw_and_throw(table)
        assert table.state.reshuffles == round_trip
    assert_conserved(table.state)


def test_reshuffle_is_replayable_from_the_deal_seed() -> None:
    stocks = []
    for seed in (3, 3, 4):
        table = Table([HAND_A, HAND_B], "JK", options=TableOptions(turn_cap=1000), seed=seed)
        exhaust_stock(table)
        draw_and_throw(table)
        stocks.append(list(table.state.stock))
    assert stocks[0] == stocks[1]
    assert stocks[0] != stocks[2]
