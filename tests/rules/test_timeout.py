"""RULES.md §2 row `turn timer` and the auto-discard decision: before the draw the
turn passes; after it one card is discarded automatically, never a joker: the
costliest card, not the one taken from the discard pile, ties to the card drawn
this turn, then to the lowest id; if none qualifies the turn just passes.

Decision (no move): a seat that can do nothing at all after its draw (no card it
may discard, no meld, lay-off, swap or put-back) does not wait for the clock:
its time runs out at once, and the turn passes by the same rule."""

from __future__ import annotations

from services.game.rules import SYSTEM, Phase, Reason, Timeout
from services.game.rules.events import Discarded, TurnBegan, TurnPassed
from services.game.rules.ruleset import TURN_TIMER_MS

from .helpers import Table, codes

NO_ACES = "2S 3S KH KD 4C 5C 6H 7H 8D 9D TC QC 2H"
OTHER = "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"


def test_turn_timer_is_45_seconds_and_the_deadline_is_in_the_turn() -> None:
    table = Table([NO_ACES, OTHER], "JK")
    began = table.events[-1]
    assert TURN_TIMER_MS == 45_000
    assert isinstance(began, TurnBegan) and began.deadline_ms == 45_000
    assert table.state.deadline_ms == 45_000


def test_timeout_is_refused_before_the_deadline_and_from_a_seat() -> None:
    table = Table([NO_ACES, OTHER], "JK")
    table.now = 44_999
    assert table.refuse(SYSTEM, Timeout()).reason == Reason.TIMEOUT_NOT_DUE
    table.now = 45_000
    assert table.refuse(0, Timeout()).reason == Reason.NOT_YOUR_TURN


def test_timeout_before_drawing_the_turn_passes_no_draw_no_discard() -> None:
    table = Table([NO_ACES, OTHER], "JK")
    before = table.state
    events = table.timeout()
    assert isinstance(events[0], TurnPassed) and events[0].seat == 0
    assert events[0].reason == "timeout"
    after = table.state
    assert after.hands == before.hands and after.stock == before.stock
    assert after.discard == before.discard
    assert after.current == 1 and after.phase == Phase.DRAW and after.turn == 2
    assert after.deadline_ms == table.now + 45_000


def test_timeout_after_drawing_discards_one_card_automatically_never_a_joker() -> None:
    hand = "JK JK JK 2S 3S 4C 5C 6H 7H 8D 9D 2C 3H"
    table = Table([hand, OTHER], "KD", "JK")
    table.draw(0)  # a fourth joker, 25 points each: none of them may go
    events = table.timeout()
    thrown = events[0]
    assert isinstance(thrown, Discarded) and thrown.automatic and thrown.seat == 0
    assert codes([thrown.card]) == "9D", "the costliest card that is not a joker"
    assert table.state.current == 1 and len(table.state.hands[0]) == 13


def test_auto_discard_ties_go_to_the_lowest_card_id() -> None:
    table = Table([NO_ACES, OTHER], "JK", "2D")
    table.draw(0)
    thrown = table.timeout()[0]
    assert isinstance(thrown, Discarded)
    # KH KD TC QC all cost 10; KH has the lowest id.
    tens = [c for c in table.state.hands[0] if table.deck.code(c) in ("KD", "TC", "QC")]
    assert codes([thrown.card]) == "KH" and all(thrown.card < c for c in tens)


def test_auto_discard_ties_go_first_to_the_card_drawn_this_turn() -> None:
    table = Table([NO_ACES, OTHER], "JK", "KC")
    table.draw(0)  # KC: 10 points like KH KD TC QC, and the highest id of them
    thrown = table.timeout()[0]
    assert isinstance(thrown, Discarded) and codes([thrown.card]) == "KC"


def test_auto_discard_never_the_card_taken_from_the_discard_pile() -> None:
    table = Table([NO_ACES, OTHER], "AS")
    table.take(0)  # the ace is the costliest card, but it was just taken
    thrown = table.timeout()[0]
    assert isinstance(thrown, Discarded) and codes([thrown.card]) == "KH"
    assert "AS" in table.hand(0).split()


def test_auto_discard_when_no_card_qualifies_the_turn_passes() -> None:
    hand = "JK JK JK JK JK JK 2S 3S 4S 5S 9H 9D 9C"
    table = Table([hand, OTHER], "KD")
    table.take(0)
    table.meld(0, "2S 3S 4S 5S", "9H 9D 9C")
    assert table.hand(0) == "KD JK JK JK JK JK JK"
    events = table.timeout()
    assert isinstance(events[0], TurnPassed) and events[0].seat == 0
    assert not any(isinstance(e, Discarded) for e in events)
    assert table.hand(0) == "KD JK JK JK JK JK JK", "nothing was discarded"
    assert table.state.current == 1


def _down_to_one_joker(table: Table) -> None:
    """Seat 0 has melded all but one joker (taken from deep in the stock)."""
    deck = table.ruleset.deck
    spare = next(c for c in table.state.stock[:-1] if deck.is_joker(c))
    table.state.stock.remove(spare)
    table.state.hands[0] = [spare]


def test_timeout_no_move_a_hand_of_jokers_passes_at_once_and_keeps_its_cards() -> None:
    table = Table([NO_ACES, OTHER], "4D", "JK")
    _down_to_one_joker(table)
    table.now = 1_000
    table.draw(0)
    jokers = sorted(table.state.hands[0])
    assert len(jokers) == 2 and all(table.ruleset.deck.is_joker(c) for c in jokers)
    assert table.state.deadline_ms == 1_000, "nothing to wait for"
    events = table.timeout()
    assert events[0] == TurnPassed(0, "no_move")
    assert isinstance(events[1], TurnBegan) and table.state.current == 1
    assert sorted(table.state.hands[0]) == jokers


def test_timeout_no_move_not_while_a_card_may_still_be_discarded() -> None:
    table = Table([NO_ACES, OTHER], "4D", "7C")
    _down_to_one_joker(table)
    table.now = 1_000
    table.draw(0)
    assert table.state.deadline_ms == TURN_TIMER_MS, "the 7C may be discarded"
    seven = table.card(0, "7C")
    table.now = TURN_TIMER_MS
    assert table.act(SYSTEM, Timeout())[0] == Discarded(0, seven, True)
