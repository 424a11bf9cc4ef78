"""`rami51`: RULES.md §3, one test per row and decision on the deck and deal, the
runs, the joker limits and the joker swap as in cafe. The opening has its own file,
test_rami51_opening.py; going out, scoring, blocked deals and game length are in
test_rami51_scoring.py. Both take their hands and helpers from here."""

from __future__ import annotations

import pytest

from services.game.rules import (
    Reason,
    RuleError,
    Side,
    SwapJoker,
    TableOptions,
    parse_cards,
    preset,
    validate_meld,
)
from services.game.rules.events import RoundDealt, RoundEnded

from .helpers import Table, assert_conserved

RAMI51 = preset("rami51")
CAFE = preset("cafe")

RAMI = "7S 8S 9S TS QD QH QC 2D 3D 4D 5C 6C 7C"
"""Four melds worth 34 + 30 + 9 + 18 = 91: all thirteen cards go down at once."""
LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C"
"""No meld; 94 points in hand."""
LONER_PENALTY = 94
OPENINGS = "KS KH KD 2C 3C 4C TS JS QS 9H 9C 9D 5H"
"""KKK = 30, 2C 3C 4C = 9, 10S JS QS = 30, 9H 9C 9D = 27, and a 5H."""


def rami51(hands: list[str], discard: str = "KD", stock: str = "", **options: int) -> Table:
    return Table(hands, discard, stock, ruleset=RAMI51, options=TableOptions(**options))


def ended(table: Table) -> RoundEnded:
    return next(e for e in table.events if isinstance(e, RoundEnded))


# --- deck / deal ----------------------------------------------------------------------


def test_rami51_deck_decision_108_cards_four_jokers_13_dealt_one_turned() -> None:
    deck = RAMI51.deck
    assert deck.size == 108
    assert sum(1 for c in deck.ids() if deck.is_joker(c)) == 4
    table = rami51([RAMI, LONER, OPENINGS])
    dealt = table.events[0]
    assert isinstance(dealt, RoundDealt)
    assert [len(h) for h in dealt.hands] == [13, 13, 13]
    assert len(table.state.discard) == 1
    assert len(table.state.stock) == 108 - 3 * 13 - 1
    assert_conserved(table.state)


def test_rami51_seed_runs_a_2_3_and_q_k_a_are_runs_k_a_2_is_not() -> None:
    assert validate_meld(parse_cards("AS 2S 3S", RAMI51), RAMI51).rank == 1
    assert validate_meld(parse_cards("QS KS AS", RAMI51), RAMI51).rank == 12
    with pytest.raises(RuleError) as caught:
        validate_meld(parse_cards("KS AS 2S", RAMI51), RAMI51)
    assert caught.value.reason == Reason.MELD_INVALID


# --- joker limits ---------------------------------------------------------------------


def test_rami51_joker_limits_two_naturals_suffice_even_with_three_jokers() -> None:
    # The seed's only limit: at least two natural cards. Unlike cafe, the jokers
    # may outnumber them.
    run = parse_cards("5H JK JK JK 9H", RAMI51)
    assert validate_meld(run, RAMI51).rank == 5
    assert validate_meld(parse_cards("8S 8H JK JK", RAMI51), RAMI51)
    with pytest.raises(RuleError) as caught:
        validate_meld(parse_cards("5H JK JK JK 9H", CAFE), CAFE)
    assert caught.value.reason == Reason.MELD_JOKER_LIMIT
    for one_natural in ("5H JK JK", "8S JK JK"):
        with pytest.raises(RuleError) as caught:
            validate_meld(parse_cards(one_natural, RAMI51), RAMI51)
        assert caught.value.reason == Reason.MELD_JOKER_LIMIT


def test_rami51_joker_limits_a_run_of_two_naturals_and_three_jokers_opens() -> None:
    hand = "5H JK JK JK 9H KS KH KD 2C 4C 6C 8C TC"
    table = rami51([hand, LONER], stock="3D")
    table.draw(0)
    table.meld(0, "5H JK JK JK 9H", "KS KH KD")  # 5+6+7+8+9 = 35, + 30
    assert table.state.opened[0]
    assert table.meld_codes(1) == "5H JK JK JK 9H"


# --- as cafe: the joker swap ----------------------------------------------------------


def test_rami51_joker_swap_as_cafe_the_joker_is_melded_again_in_the_same_action() -> None:
    owner = "8S 9S JK KH KD KC 2C 4C 6C 8C TC QD AH"
    swapper = "TS QC QH QS 4D 5D 6D 7D 3H 5H 9H JH 2C"
    table = rami51([owner, swapper], stock="5S 3C")
    table.draw(0)
    table.meld(0, "8S 9S JK", "KH KD KC")
    table.discard(0, "5S")
    table.draw(1)
    table.meld(1, "QC QH QS", "4D 5D 6D 7D")  # 30 + 22
    joker, ts = table.joker_of(1), table.card(1, "TS")
    bare = SwapJoker(1, joker, ts)
    assert table.refuse(1, bare).reason == Reason.SWAP_JOKER_NOT_PLACED
    table.act(1, table.swap(1, 1, "TS", lay_off=4, side=Side.HIGH))
    assert table.meld_codes(1) == "8S 9S TS" and table.meld_codes(4) == "4D 5D 6D 7D JK"
    assert joker not in table.state.hands[1]
