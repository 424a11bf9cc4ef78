"""`rami51`, the opening: RULES.md §3, one test per row and decision on the opening
threshold (a table option), how an opening is counted, what a player may do before
and after opening, the card taken from the discard pile before opening (Reposer)
and the exemption; with seed 001's opening worth 28 that leaves one card and seed
000's 51-point paragraph (10S JS QS = 30 and 9H 9C 9D = 27 open 57)."""

from __future__ import annotations

import pytest

from services.game.rules import (
    LayOff,
    Phase,
    Reason,
    TableOptions,
    TakeDiscard,
    new_game,
    parse_cards,
    preset,
    validate_meld,
)
from services.game.rules.actions import Reposer
from services.game.rules.events import Drew, EndReason, Reposed
from services.game.rules.ruleset import effective_options
from services.game.rules.scoring import meld_points

from .helpers import Table, assert_conserved, codes
from .test_rami51 import LONER, LONER_PENALTY, OPENINGS, RAMI, RAMI51, ended, rami51

# --- opening threshold: a table option ------------------------------------------------


def test_rami51_opening_threshold_table_option_30_40_default_or_51() -> None:
    assert effective_options(RAMI51, TableOptions()).opening_threshold == 40
    for threshold in (30, 40, 51):
        options = effective_options(RAMI51, TableOptions(opening_threshold=threshold))
        assert options.opening_threshold == threshold
        assert new_game(RAMI51, 2, TableOptions(opening_threshold=threshold)).options == options
    for other in (1, 20, 35, 45, 50, 52, 60):
        with pytest.raises(ValueError, match="30, 40, 51"):
            effective_options(RAMI51, TableOptions(opening_threshold=other))
    for name in ("cafe", "classic", "contract"):
        with pytest.raises(ValueError):
            effective_options(preset(name), TableOptions(opening_threshold=30))


@pytest.mark.parametrize(
    ("threshold", "melds", "opens"),
    [
        (30, ["KS KH KD"], True),
        (40, ["KS KH KD"], False),
        (40, ["KS KH KD", "2C 3C 4C"], False),  # 39
        (30, ["KS KH KD", "2C 3C 4C"], True),
        (40, ["TS JS QS", "9H 9C 9D"], True),  # 57
        (51, ["TS JS QS", "9H 9C 9D"], True),
        (51, ["KS KH KD", "2C 3C 4C"], False),
        (51, ["KS KH KD", "TS JS QS"], True),  # 60
    ],
)
def test_rami51_opening_threshold_is_the_tables(
    threshold: int, melds: list[str], opens: bool
) -> None:
    table = rami51([OPENINGS, LONER], stock="6D", opening_threshold=threshold)
    table.draw(0)
    if opens:
        table.meld(0, *melds)
        assert table.state.opened[0]
    else:
        refusal = table.refuse(0, table.meld_action(0, *melds))
        assert refusal.reason == Reason.OPENING_TOO_LOW
        assert str(threshold) in refusal.message


def test_rami51_seed_000_example_10s_js_qs_30_and_9h_9c_9d_27_open_57_at_51() -> None:
    run = validate_meld(parse_cards("TS JS QS", RAMI51), RAMI51)
    group = validate_meld(parse_cards("9H 9C 9D", RAMI51), RAMI51)
    assert meld_points(run, RAMI51) == 30
    assert meld_points(group, RAMI51) == 27
    table = rami51([OPENINGS, LONER], stock="6D", opening_threshold=51)
    table.draw(0)
    assert table.refuse(0, table.meld_action(0, "TS JS QS")).reason == Reason.OPENING_TOO_LOW
    table.meld(0, "TS JS QS", "9H 9C 9D")
    assert table.state.opened[0]


# --- opening count --------------------------------------------------------------------


def test_rami51_opening_count_one_single_action_not_a_running_total() -> None:
    # 30 now and 30 next turn never opens at 40; both in one action do.
    table = rami51([OPENINGS, LONER], stock="6D 7D 8D")
    table.draw(0)
    assert table.refuse(0, table.meld_action(0, "KS KH KD")).reason == Reason.OPENING_TOO_LOW
    table.discard(0, "6D")
    table.draw_and_throw(1)
    table.draw(0)
    refusal = table.refuse(0, table.meld_action(0, "TS JS QS"))
    assert refusal.reason == Reason.OPENING_TOO_LOW
    assert not table.state.opened[0] and table.state.melds == []
    table.meld(0, "KS KH KD", "TS JS QS")
    assert table.state.opened[0] and len(table.state.melds) == 2


def test_rami51_opening_count_any_mix_of_groups_and_runs_no_pure_run_needed() -> None:
    table = rami51([OPENINGS, LONER], stock="6D")
    table.draw(0)
    table.meld(0, "KS KH KD", "9H 9C 9D")  # two groups, no run at all: 57
    assert table.state.opened[0]


def test_rami51_opening_values_ace_low_counts_1_ace_high_11_decision() -> None:
    hand = "AS 2S 3S QH KH AH JH 5C 7C 9C 2D 4D 6D"
    table = rami51([hand, LONER], stock="8D")
    table.draw(0)
    # 1 + 2 + 3 and 10 + 10 + 11: 37, not 47 as it would with an ace always 11.
    assert table.refuse(0, table.meld_action(0, "AS 2S 3S", "QH KH AH")).reason == (
        Reason.OPENING_TOO_LOW
    )
    table.meld(0, "AS 2S 3S", "JH QH KH AH")  # 6 + 41 = 47
    assert table.state.opened[0]
    assert meld_points(validate_meld(parse_cards("AS AH AD", RAMI51), RAMI51), RAMI51) == 33


def test_rami51_opening_values_a_joker_counts_as_the_card_it_stands_for_decision() -> None:
    hand = "8S 9S JK QS KS 4D 4H 4C 3D 3H 3C 6C 2H"
    table = rami51([hand, LONER], stock="TD")
    table.draw(0)
    # 8S 9S JK: the joker is the TS, 10 points: 27 + 12 = 39, not 40.
    refusal = table.refuse(0, table.meld_action(0, "8S 9S JK", "4D 4H 4C"))
    assert refusal.reason == Reason.OPENING_TOO_LOW
    # QS KS JK: the joker is the ace above the king, 11 points: 31 + 9 = 40.
    table.meld(0, "QS KS JK", "3D 3H 3C")
    assert table.state.opened[0]
    group = validate_meld(parse_cards("8S 8H JK", RAMI51), RAMI51)
    assert meld_points(group, RAMI51) == 24, "a group is its value times its cards"


# --- before opening -------------------------------------------------------------------


def test_rami51_before_opening_no_lay_off_and_no_joker_swap() -> None:
    owner = "8S 9S JK KH KD KC 2C 4C 6C 8C TC QD AH"
    swapper = "TS 7S 3H 5H 7H 9H JH 2D 4D 6D 8D TD QC"
    table = rami51([owner, swapper], stock="5S JS")
    table.draw(0)
    table.meld(0, "8S 9S JK", "KH KD KC")  # 27 + 30
    table.discard(0, "5S")
    table.draw(1)  # JS, which would fit 8S 9S JK above the joker
    refusal = table.refuse(1, LayOff(1, table.cards(1, "7S")))
    assert refusal.reason == Reason.NOT_OPENED
    swap = table.swap(1, 1, "TS", new_meld="JS JK 7S")
    assert table.refuse(1, swap).reason == Reason.NOT_OPENED


# --- the card taken from the discard pile before opening ------------------------------


REPOSER_HAND = "KS KD TS JS QS 9H 9C 9D 2C 5H 7H 4D 6C"
"""With the KH on the discard pile: KS KH KD + TS JS QS opens with it, and
TS JS QS + 9H 9C 9D (57) opens without it."""


def test_rami51_taken_discard_used_in_the_opening_made_this_turn() -> None:
    table = rami51([REPOSER_HAND, LONER], discard="KH")
    table.take(0)
    table.meld(0, "KS KH KD", "TS JS QS")
    assert table.state.opened[0]
    table.discard(0, "2C")
    assert table.state.current == 1


def test_rami51_taken_discard_not_used_the_opening_and_the_discard_are_refused() -> None:
    table = rami51([REPOSER_HAND, LONER], discard="KH")
    table.take(0)
    refusal = table.refuse(0, table.meld_action(0, "TS JS QS", "9H 9C 9D"))
    assert refusal.reason == Reason.TAKEN_CARD_UNUSED
    refusal = table.refuse(0, table.discard_action(0, "2C"))
    assert refusal.reason == Reason.TAKEN_CARD_UNUSED
    assert "put it back" in refusal.message


def test_rami51_reposer_puts_the_card_back_then_the_player_draws_from_the_stock() -> None:
    table = rami51([REPOSER_HAND, LONER], discard="KH", stock="8H")
    kh = table.state.discard[-1]
    hand = sorted(table.state.hands[0])
    table.take(0)
    events = table.act(0, Reposer())
    assert events == [Reposed(0, kh)]
    assert table.state.discard[-1] == kh and sorted(table.state.hands[0]) == hand
    assert table.state.phase == Phase.DRAW and table.state.current == 0
    # Decision: after Reposer the player draws from the stock, not the discard again.
    assert table.refuse(0, TakeDiscard()).reason == Reason.REPOSER_NOT_ALLOWED
    drew = table.draw(0)[0]
    assert isinstance(drew, Drew) and not drew.from_discard and codes([drew.card]) == "8H"
    table.meld(0, "TS JS QS", "9H 9C 9D")  # and may open without the KH
    table.discard(0, "8H")
    assert table.top() == "8H" and table.state.turn == 2
    assert_conserved(table.state)


def test_rami51_reposer_only_before_any_other_move_of_the_turn() -> None:
    table = rami51([REPOSER_HAND, LONER], discard="KH", stock="8H")
    table.draw(0)  # nothing was taken: nothing to put back
    assert table.refuse(0, Reposer()).reason == Reason.REPOSER_NOT_ALLOWED
    table = rami51([REPOSER_HAND, LONER], discard="KH")
    assert table.refuse(0, Reposer()).reason == Reason.MUST_DRAW_FIRST
    table.take(0)
    table.meld(0, "KS KH KD", "TS JS QS")  # a move: the opening, with the card
    assert table.refuse(0, Reposer()).reason == Reason.REPOSER_NOT_ALLOWED
    cafe = Table([RAMI, LONER], "KH")
    cafe.take(0)
    assert cafe.refuse(0, Reposer()).reason == Reason.RULE_NOT_IN_PLAY


def test_rami51_after_opening_a_taken_discard_may_stay_in_hand() -> None:
    table = rami51([REPOSER_HAND, LONER], discard="KH", stock="8H 3S")
    table.draw(0)
    table.meld(0, "TS JS QS", "9H 9C 9D")
    table.discard(0, "8H")
    table.draw(1)
    table.discard(1, "AS")
    table.take(0)  # opened: the AS needs no meld, and cannot be put back
    assert table.refuse(0, Reposer()).reason == Reason.REPOSER_NOT_ALLOWED
    table.discard(0, "2C")
    assert "AS" in table.hand(0).split()


# --- the exemption --------------------------------------------------------------------


LOW = "AS 2S 3S 4S AH 2H 3H AD 2D 3D AC 2C KC"
"""A-4S (10), A-3H, A-3D (6 each) and A 2 of clubs: 28 points at most with the 3C."""


def test_rami51_seed_example_an_opening_worth_28_that_leaves_one_card_is_accepted() -> None:
    table = rami51([LOW, LONER], stock="3C", opening_threshold=51)
    table.draw(0)
    table.meld(0, "AS 2S 3S 4S", "AH 2H 3H", "AD 2D 3D", "AC 2C 3C")  # 28 points
    assert table.state.opened[0] and table.hand(0) == "KC"
    table.discard(0, "KC")
    # Emptied in a turn begun without having opened: a rami d'un coup, doubled.
    assert ended(table).penalties == (2 * LONER_PENALTY, 0)


def test_rami51_exemption_an_opening_that_leaves_no_card_needs_no_threshold() -> None:
    hand = "AS 2S 3S 4S AH 2H 3H AD 2D 3D AC 2C 3C"
    table = rami51([hand, LONER], stock="4C", opening_threshold=51)
    table.draw(0)
    table.meld(0, "AS 2S 3S 4S", "AH 2H 3H", "AD 2D 3D", "AC 2C 3C 4C")  # 32 points
    assert table.state.hands[0] == []
    assert ended(table).winner == 0 and ended(table).reason == EndReason.WENT_OUT


def test_rami51_exemption_does_not_cover_an_opening_that_leaves_two_cards() -> None:
    table = rami51([LOW, LONER], stock="3C", opening_threshold=51)
    table.draw(0)
    action = table.meld_action(0, "AS 2S 3S", "AH 2H 3H", "AD 2D 3D", "AC 2C 3C")
    assert table.refuse(0, action).reason == Reason.OPENING_TOO_LOW  # 24, leaves 4S KC
    table = rami51([LOW, LONER], stock="3C", opening_threshold=30)
    table.draw(0)
    assert table.refuse(0, action).reason == Reason.OPENING_TOO_LOW


# --- after opening --------------------------------------------------------------------


def test_rami51_after_opening_new_melds_and_lay_offs_need_no_minimum() -> None:
    hand = "KS KH KD TS JS QS 2C 2H 2D 4H 6H 8D 5C"
    table = rami51([hand, LONER], stock="6D 3S 9S")
    table.draw(0)
    table.meld(0, "KS KH KD", "TS JS QS")
    table.discard(0, "6D")
    table.draw_and_throw(1)
    table.draw(0)  # 9S
    table.meld(0, "2C 2H 2D")  # 6 points
    table.lay_off(0, 2, "9S")  # below TS JS QS
    assert table.meld_codes(3) == "2C 2H 2D" and table.meld_codes(2) == "9S TS JS QS"
