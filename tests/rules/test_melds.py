"""Meld validation: RULES.md §1 (groups, runs, the joker) and §2 `joker limits`,
with the seed text's tables of valid and refused melds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.game.rules import Reason, RuleError, Shape, parse_cards, validate_meld
from services.game.rules.cards import card_label
from services.game.rules.melds import MeldKind, check_meld, joker_targets
from services.game.rules.ruleset import Ruleset

from .helpers import CAFE, codes


def meld(text: str, joker_suits: tuple[tuple[int, int], ...] = ()) -> Shape:
    return check_meld(parse_cards(text, CAFE), CAFE, joker_suits)


def refused(text: str) -> Reason:
    with pytest.raises(RuleError) as caught:
        meld(text)
    return caught.value.reason


def stands_for(text: str) -> list[str]:
    """What each joker of a valid meld stands for, in meld order."""
    shape = meld(text)
    placed = shape.place(1, 0)
    jokers = [c for c in shape.cards if CAFE.deck.is_joker(c)]
    return ["/".join(card_label(r, s) for r, s in joker_targets(placed, j, CAFE)) for j in jokers]


# --- §1 groups ----------------------------------------------------------------


def test_group_of_three_and_of_four_different_suits() -> None:
    assert meld("7S 7H 7D").kind == MeldKind.GROUP
    assert meld("JS JH JC JD").kind == MeldKind.GROUP


def test_group_two_copies_of_one_card_are_refused() -> None:
    assert refused("7S 7S 7D") == Reason.MELD_INVALID


def test_group_never_exceeds_four_five_of_a_kind_refused() -> None:
    assert refused("KS KH KC KD KS") == Reason.MELD_INVALID


def test_group_needs_one_rank() -> None:
    assert refused("7S 7H 8D") == Reason.MELD_INVALID


def test_meld_needs_three_cards() -> None:
    assert refused("7S 7H") == Reason.MELD_TOO_SHORT
    assert refused("7S 8S") == Reason.MELD_TOO_SHORT


# --- §1 runs ------------------------------------------------------------------


def test_run_three_or_more_consecutive_of_one_suit() -> None:
    shape = meld("5H 6H 7H")
    assert shape.kind == MeldKind.RUN and shape.rank == 5


def test_run_mixed_suits_refused() -> None:
    assert refused("5H 6S 7H") == Reason.MELD_INVALID


def test_run_with_a_gap_refused() -> None:
    assert refused("5H 6H 8H") == Reason.MELD_INVALID


def test_run_ace_low_a23() -> None:
    assert meld("AC 2C 3C").rank == 1


def test_run_ace_high_qka() -> None:
    shape = meld("QC KC AC")
    assert shape.rank == 12 and codes(shape.cards) == "QC KC AC"


def test_run_never_wraps_k_a_2_refused() -> None:
    assert refused("KC AC 2C") == Reason.MELD_INVALID
    assert refused("KC JK 2C") == Reason.MELD_INVALID, "nor with a joker for the ace"


def test_run_of_thirteen_cards_ace_low_or_high_is_the_longest() -> None:
    assert len(meld("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS").cards) == 13
    assert meld("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS").rank == 2


def test_run_of_fourteen_cards_with_both_aces_refused() -> None:
    assert refused("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS") == Reason.MELD_INVALID


def test_run_given_unordered_without_jokers_is_sorted() -> None:
    assert codes(meld("7H 5H 6H").cards) == "5H 6H 7H"
    assert codes(meld("AD KD QD").cards) == "QD KD AD"


# --- §1 the joker ---------------------------------------------------------------


def test_run_order_fixes_the_joker_above_is_ts() -> None:
    shape = meld("8S 9S JK")
    assert shape.rank == 8 and stands_for("8S 9S JK") == ["TS"]


def test_run_order_fixes_the_joker_below_is_7s() -> None:
    shape = meld("JK 8S 9S")
    assert shape.rank == 7 and stands_for("JK 8S 9S") == ["7S"]


def test_run_joker_inside_fills_the_gap() -> None:
    assert stands_for("5D JK 7D") == ["6D"]


def test_run_written_high_to_low_reads_the_same_way() -> None:
    shape = meld("9S 8S JK")
    assert codes(shape.cards) == "JK 8S 9S" and stands_for("9S 8S JK") == ["7S"]


def test_run_joker_may_be_the_high_ace() -> None:
    assert stands_for("QH KH JK") == ["AH"]
    assert refused("KH JK 2H") == Reason.MELD_INVALID


def test_group_joker_stands_for_a_missing_suit() -> None:
    shape = meld("QH QC JK")  # seed: D♥ D♣ + joker is a brelan of queens
    assert shape.kind == MeldKind.GROUP and shape.rank == 12
    assert stands_for("QH QC JK") == ["QS/QD"]


def test_group_joker_with_a_named_suit() -> None:
    (joker,) = [c for c in parse_cards("QH QC JK", CAFE) if CAFE.deck.is_joker(c)]
    cards = parse_cards("QH QC JK", CAFE)
    shape = check_meld(cards, CAFE, ((joker, 2),))
    assert shape.joker_suits == ((joker, 2),)
    with pytest.raises(RuleError) as caught:
        check_meld(cards, CAFE, ((joker, 1),))  # hearts is already there
    assert caught.value.reason == Reason.MELD_INVALID
    with pytest.raises(RuleError):
        check_meld(cards, CAFE, ((joker, 4),))  # not a suit
    with pytest.raises(RuleError):
        check_meld(cards, CAFE, ((cards[0], 2),))  # not a joker
    with pytest.raises(RuleError):
        check_meld(parse_cards("5H 6H JK", CAFE), CAFE, ((joker, 1),))  # runs name no suit


# --- §2 joker limits --------------------------------------------------------------


def test_joker_limit_two_naturals_and_one_joker_yes() -> None:
    assert meld("7S 7H JK").kind == MeldKind.GROUP
    assert meld("7S JK 9S").kind == MeldKind.RUN


def test_joker_limit_one_natural_and_two_jokers_no() -> None:
    assert refused("7S JK JK") == Reason.MELD_JOKER_LIMIT
    assert refused("JK 7S JK") == Reason.MELD_JOKER_LIMIT


def test_joker_limit_four_naturals_and_four_jokers_in_a_run_yes() -> None:
    shape = meld("3H JK 5H JK 7H JK 9H JK")
    assert shape.kind == MeldKind.RUN and len(shape.cards) == 8
    assert stands_for("3H JK 5H JK 7H JK 9H JK") == ["4H", "6H", "8H", "TH"]


def test_joker_limit_more_jokers_than_naturals_no() -> None:
    assert refused("3H JK 5H JK 7H JK JK") == Reason.MELD_JOKER_LIMIT
    assert refused("3H JK 5H JK JK") == Reason.MELD_JOKER_LIMIT
    assert meld("7S 7H JK JK").kind == MeldKind.GROUP, "2 + 2 is a carré"


def test_all_jokers_is_no_meld() -> None:
    assert refused("JK JK JK") == Reason.MELD_JOKER_LIMIT


# --- the kind a player names ---------------------------------------------------------


def as_kind(text: str, kind: MeldKind, ruleset: Ruleset = CAFE) -> Shape:
    return check_meld(parse_cards(text, ruleset), ruleset, (), kind)


def refused_as(text: str, kind: MeldKind) -> RuleError:
    with pytest.raises(RuleError) as caught:
        as_kind(text, kind)
    assert caught.value.message.endswith(".")
    return caught.value


def test_kind_named_reads_the_cards_only_that_way() -> None:
    assert as_kind("7S 7H 7D", MeldKind.GROUP).kind == MeldKind.GROUP
    assert as_kind("7S 8S 9S", MeldKind.RUN).kind == MeldKind.RUN
    assert as_kind("8S 9S JK", MeldKind.RUN).cards == meld("8S 9S JK").cards
    assert as_kind("QH QC JK", MeldKind.GROUP) == meld("QH QC JK")


def test_kind_named_refuses_cards_of_the_other_kind() -> None:
    wrong = refused_as("7S 7H 7D", MeldKind.RUN)
    assert wrong.reason == Reason.MELD_KIND_MISMATCH
    assert wrong.message == "These cards make a group, not a run."
    wrong = refused_as("7S 8S JK", MeldKind.GROUP)
    assert wrong.reason == Reason.MELD_KIND_MISMATCH
    assert wrong.message == "These cards make a run, not a group."


def test_kind_named_on_cards_of_no_meld_says_why_not_that_kind() -> None:
    assert refused_as("7S 8H TD", MeldKind.RUN).reason == Reason.MELD_INVALID
    assert refused_as("7S 8H TD", MeldKind.GROUP).reason == Reason.MELD_INVALID
    assert refused_as("7S 7S 7D", MeldKind.GROUP).reason == Reason.MELD_INVALID
    assert refused_as("7S JK JK", MeldKind.RUN).reason == Reason.MELD_JOKER_LIMIT
    assert refused_as("7S 8S", MeldKind.RUN).reason == Reason.MELD_TOO_SHORT


def test_kind_named_run_names_no_joker_suit() -> None:
    cards = parse_cards("QH QC JK", CAFE)
    suits = ((cards[2], 2),)
    assert check_meld(cards, CAFE, suits, MeldKind.GROUP).joker_suits == suits
    with pytest.raises(RuleError) as caught:
        check_meld(cards, CAFE, suits, MeldKind.RUN)
    assert caught.value.reason == Reason.MELD_KIND_MISMATCH


def test_kind_decides_cards_that_make_both() -> None:
    # No preset lets one natural card carry two jokers; a rule set that did
    # would read 7S JK JK as a brelan of sevens or as 7S 8S 9S.
    loose = replace(CAFE, min_naturals=1, naturals_at_least_jokers=False)
    assert check_meld(parse_cards("7S JK JK", loose), loose).kind == MeldKind.GROUP
    run = as_kind("7S JK JK", MeldKind.RUN, loose)
    assert (run.kind, run.rank, run.suit) == (MeldKind.RUN, 7, 0)
    group = as_kind("7S JK JK", MeldKind.GROUP, loose)
    assert (group.kind, group.rank) == (MeldKind.GROUP, 7)


# --- the seed's tables ---------------------------------------------------------------

SEED_VALID = [
    "7S 7H 7D",  # brelan valide
    "JS JH JC JD",  # V♠ V♥ V♣ V♦ : carré valide
    "5H 6H 7H",
    "9C TC JC QC KC",  # 9♣ 10♣ V♣ D♣ R♣
    "AC 2C 3C",
    "QC KC AC",
    "9S 9H 9C",
    "KS KH KC KD",
    "3D 4D 5D 6D",
    "AH 2H 3H",
    "QH KH AH",
    "8S 9S JK",
    "QH QC JK",
]
SEED_REFUSED = [
    "7S 7S 7D",
    "5H 6S 7H",
    "KC AC 2C",
    "9S 9S 9H",
    "KS KH KC KD KS",
    "3D 4C 5D",
    "KH AH 2H",
]


@pytest.mark.parametrize("text", SEED_VALID)
def test_seed_table_valid_melds(text: str) -> None:
    assert sorted(validate_meld(parse_cards(text, CAFE), CAFE).cards) == sorted(
        parse_cards(text, CAFE)
    )


@pytest.mark.parametrize("text", SEED_REFUSED)
def test_seed_table_refused_melds(text: str) -> None:
    assert refused(text) == Reason.MELD_INVALID


def test_refusals_carry_a_sentence() -> None:
    for text in SEED_REFUSED:
        with pytest.raises(RuleError) as caught:
            meld(text)
        assert caught.value.message.endswith(".") and len(caught.value.message) > 20
