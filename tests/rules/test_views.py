"""RULES.md §6 `hidden information`: a seat sees its own hand, the table, the
discard pile and the others' card counts; never another hand or the stock
order. Events are filtered the same way."""

from __future__ import annotations

from dataclasses import fields

from services.game.rules import SeatView, view
from services.game.rules.events import HIDDEN, Drew, RoundDealt

from .helpers import Table

HAND_A = "AS 3S 5S 7S QS JS KS 2H 4H 6H 8H TH QH"
HAND_B = "AD 3D 5D 7D 9D JD KD 2C 4C 6C 8C TC QC"


def test_view_shows_own_hand_the_table_and_only_counts_of_other_hands() -> None:
    table = Table([HAND_A, HAND_B], "JK", "5C")
    table.draw(0)
    table.meld(0, "JS QS KS")
    seen = view(table.state, 1)
    assert seen.hand == tuple(table.state.hands[1])
    assert seen.hand_sizes == (11, 13)
    assert seen.melds == tuple(table.state.melds)
    assert seen.discard == tuple(table.state.discard)
    assert seen.stock_size == len(table.state.stock)
    hidden = set(table.state.hands[0]) | set(table.state.stock)
    assert not hidden & set(seen.hand) and not hidden & set(seen.discard)
    assert seen.taken_discard == -1


def test_view_of_a_spectator_holds_no_hand() -> None:
    table = Table([HAND_A, HAND_B], "JK")
    seen = view(table.state, None)
    assert seen.hand == () and seen.hand_sizes == (13, 13)


def test_view_has_no_field_for_the_stock_order_or_other_hands() -> None:
    names = {f.name for f in fields(SeatView)}
    assert not names & {"stock", "hands", "drawn", "seed"}


def test_events_deal_shows_each_seat_only_its_own_hand() -> None:
    table = Table([HAND_A, HAND_B], "JK")
    dealt = table.log[0]
    assert isinstance(dealt, RoundDealt)
    for viewer in (0, 1, None):
        seen = dealt.visible_to(viewer)
        assert isinstance(seen, RoundDealt)
        for seat, hand in enumerate(seen.hands):
            if seat == viewer:
                assert list(hand) == table.state.hands[seat]
            else:
                assert set(hand) == {HIDDEN} and len(hand) == 13


def test_events_a_stock_draw_is_hidden_from_others_a_discard_draw_is_not() -> None:
    table = Table([HAND_A, HAND_B], "JK", "5C")
    (drew,) = [e for e in table.draw(0) if isinstance(e, Drew)]
    assert drew.visible_to(0) == drew
    for viewer in (1, None):
        hidden = drew.visible_to(viewer)
        assert isinstance(hidden, Drew) and hidden.card == HIDDEN
        assert hidden.stock_size == drew.stock_size
    table.discard(0, "KS")
    (took,) = [e for e in table.take(1) if isinstance(e, Drew)]
    assert took.visible_to(0) == took and took.visible_to(None) == took
