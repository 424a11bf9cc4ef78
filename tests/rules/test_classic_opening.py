"""`classic`, taking the discard and the opening: RULES.md §4, one test per row and
decision on the card taken from the discard pile and the 51-point opening, with
seed 002's values (a joker in a group of 8s counts 8; the ace 11, or 1 in A 2 3)."""

from __future__ import annotations

import pytest

from services.game.rules import Reason, TableOptions, TakeDiscard, parse_cards, validate_meld
from services.game.rules.ruleset import effective_options
from services.game.rules.scoring import meld_points

from .test_classic import CLASSIC, LONER, classic

# --- taking the discard ---------------------------------------------------------------

TAKER = "KS KH 7S 8S 9S 2D 4D 6D 8C TC QH 3C 5H JD"


def test_classic_taking_the_discard_before_opening_used_in_an_opening_of_51() -> None:
    table = classic([TAKER, LONER])
    table.take(0)  # the KD
    refusal = table.refuse(0, table.discard_action(0, "2D"))
    assert refusal.reason == Reason.TAKEN_CARD_UNUSED
    table.meld(0, "KS KH KD", "7S 8S 9S")  # 30 + 24 = 54
    table.discard(0, "2D")
    assert table.state.current == 1


def test_classic_taking_the_discard_before_opening_the_opening_itself_uses_it() -> None:
    """'before opening: in an opening of >= 51 made this turn': an opening that
    leaves the card out is refused, even if a meld after it could use the card."""
    table = classic(["KS KH KC 7S 8S 9S 4D 6D 2C 8C TC QH 3C JD", LONER], discard="5D")
    table.take(0)
    refusal = table.refuse(0, table.meld_action(0, "KS KH KC", "7S 8S 9S"))  # 54, no 5D
    assert refusal.reason == Reason.TAKEN_CARD_UNUSED
    table.meld(0, "KS KH KC", "7S 8S 9S", "4D 5D 6D")  # 69, with the 5D
    table.discard(0, "2C")
    assert table.state.current == 1


def test_classic_taking_the_discard_the_card_may_not_stay_in_hand() -> None:
    table = classic([TAKER, LONER])
    table.take(0)  # the KD: KS KH KD and 7S 8S 9S would open with 54
    for code in ("2D", "QH", "8C"):
        refusal = table.refuse(0, table.discard_action(0, code))
        assert refusal.reason == Reason.TAKEN_CARD_UNUSED
    assert table.refuse(0, table.discard_action(0, "KD")).reason == Reason.DISCARD_TAKEN_CARD
    refusal = table.refuse(0, table.meld_action(0, "7S 8S 9S"))
    assert refusal.reason == Reason.OPENING_TOO_LOW


def test_classic_taking_the_discard_is_refused_when_the_card_cannot_be_used() -> None:
    """Seed 002: "seulement si la carte piochée dans la défausse permet au joueur
    de poser". A card that cannot go into an opening of 51 (before opening), or
    fits nothing (after), would leave the seat with no move: the take is refused."""
    table = classic([TAKER, LONER], discard="5D")  # 4D 5D 6D is a run, but worth 15
    assert table.refuse(0, TakeDiscard()).reason == Reason.DISCARD_UNUSABLE
    table = classic([TAKER, LONER], discard="AC")  # in no meld at all
    assert table.refuse(0, TakeDiscard()).reason == Reason.DISCARD_UNUSABLE
    table = classic([TAKER, LONER], discard="QD", stock="KD AC")
    table.draw(0)
    table.meld(0, "KS KH KD", "7S 8S 9S")
    table.discard(0, "2D")
    table.draw(1)
    table.discard(1, "AC")  # fits no meld of seat 0's, and none on the table
    assert table.refuse(0, TakeDiscard()).reason == Reason.DISCARD_UNUSABLE


def test_classic_taking_the_discard_a_lay_off_with_another_card_of_the_hand_uses_it() -> None:
    """The JS alone fits nowhere, but the TS of the hand and the JS go onto 7S 8S 9S
    in one lay-off: the take is allowed."""
    hand = "KS KH 7S 8S 9S TS 4D 6D 8C 2C QH 3C 5H JD"
    table = classic([hand, LONER], discard="QD", stock="KD JS")
    table.draw(0)
    table.meld(0, "KS KH KD", "7S 8S 9S")
    table.discard(0, "2C")
    table.draw(1)
    table.discard(1, "JS")
    table.take(0)
    table.lay_off(0, 2, "TS JS")
    assert table.meld_codes(2) == "7S 8S 9S TS JS"


def test_classic_taking_the_discard_after_opening_used_in_a_lay_off_this_turn() -> None:
    table = classic([TAKER, LONER], discard="3D", stock="KD TS")
    table.draw(0)
    table.meld(0, "KS KH KD", "7S 8S 9S")
    table.discard(0, "2D")
    table.draw(1)
    table.discard(1, "TS")  # fits 7S 8S 9S
    table.take(0)
    assert table.refuse(0, table.discard_action(0, "QH")).reason == Reason.TAKEN_CARD_UNUSED
    table.lay_off(0, 2, "TS")
    table.discard(0, "QH")
    assert table.meld_codes(2) == "7S 8S 9S TS"


# --- opening --------------------------------------------------------------------------

OPENER = "TS JS QS 2C 3C 4C 5C 6C 7H 7D 7C KH KD AS"


def test_classic_opening_the_first_melds_must_total_51() -> None:
    table = classic([OPENER, LONER], stock="9H")
    table.draw(0)
    refusal = table.refuse(0, table.meld_action(0, "TS JS QS", "2C 3C 4C 5C 6C"))  # 50
    assert refusal.reason == Reason.OPENING_TOO_LOW and "51" in refusal.message
    table.meld(0, "TS JS QS", "7H 7D 7C")  # 51
    assert table.state.opened[0]
    assert table.state.options.opening_threshold == 51


def test_classic_opening_threshold_is_not_a_table_option() -> None:
    with pytest.raises(ValueError):
        effective_options(CLASSIC, TableOptions(opening_threshold=40))


def test_classic_opening_counted_over_one_action() -> None:
    table = classic([OPENER, LONER], stock="9H 4S 8D")
    table.draw(0)
    assert table.refuse(0, table.meld_action(0, "TS JS QS")).reason == Reason.OPENING_TOO_LOW
    table.discard(0, "9H")
    table.draw_and_throw(1)
    table.draw(0)
    assert table.refuse(0, table.meld_action(0, "7H 7D 7C")).reason == Reason.OPENING_TOO_LOW
    assert not table.state.opened[0]


def test_classic_seed_values_ace_11_or_1_in_a_low_run_joker_as_the_card_it_replaces() -> None:
    def points(text: str) -> int:
        return meld_points(validate_meld(parse_cards(text, CLASSIC), CLASSIC), CLASSIC)

    assert points("AS AH AD") == 33
    assert points("QH KH AH") == 31  # a high run: Dame, Roi, As
    assert points("AS 2S 3S") == 6  # a low run: the ace counts 1
    assert points("8S 8H JK") == 24, "a joker in a brelan of 8s counts 8"
    assert points("8S 9S JK") == 27  # the joker is the 10S
