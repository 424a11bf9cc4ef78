"""`rami51`: RULES.md §3, one test per row and decision, and the worked examples
of seed 001 (K+7, A+JK+3, 4+4+Q = 69, doubled 138; blocked hands 25, 17, 24 -> 15;
an opening worth 28 that leaves one card) and of seed 000's 51-point paragraph
(10S JS QS = 30 and 9H 9C 9D = 27 open 57)."""

from __future__ import annotations

import pytest

from services.game.rules import (
    SYSTEM,
    Deal,
    DrawStock,
    LayOff,
    Phase,
    Reason,
    RuleError,
    SwapJoker,
    TableOptions,
    TakeDiscard,
    apply,
    hand_penalty,
    new_game,
    parse_cards,
    preset,
    validate_meld,
)
from services.game.rules.actions import Reposer
from services.game.rules.events import (
    Drew,
    EndReason,
    GameEnded,
    Reposed,
    Reshuffled,
    RoundDealt,
    RoundEnded,
)
from services.game.rules.ruleset import effective_options, with_changes
from services.game.rules.scoring import card_penalty, meld_points

from .helpers import Table, assert_conserved, codes, sorted_codes

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


# --- going out ------------------------------------------------------------------------


def opened_with_a_club_run_left(stock: str) -> Table:
    """Seat 0 opens in turn 1 keeping 5C 6C 7C; in turn 2 it has drawn the
    first card of ``stock``."""
    table = rami51([RAMI, LONER], stock="KH 3S " + stock)
    table.draw(0)
    table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D")
    table.discard(0, "KH")
    table.draw_and_throw(1)
    table.draw(0)
    return table


def test_rami51_going_out_by_discarding_the_last_card() -> None:
    table = opened_with_a_club_run_left("9D")
    table.meld(0, "5C 6C 7C")
    table.discard(0, "9D")
    assert table.kinds()[:2] == ["Discarded", "RoundEnded"] and table.kinds()[-1] == "GameEnded"
    assert ended(table).winner == 0 and ended(table).reason == EndReason.WENT_OUT


def test_rami51_going_out_by_melding_the_last_card_no_discard_needed() -> None:
    table = opened_with_a_club_run_left("8C")
    table.meld(0, "5C 6C 7C 8C")
    assert table.kinds()[:2] == ["Melded", "RoundEnded"] and table.kinds()[-1] == "GameEnded"
    assert ended(table).winner == 0 and table.state.hands[0] == []
    assert table.state.phase == Phase.GAME_OVER


def test_rami51_going_out_by_laying_off_the_last_card() -> None:
    table = opened_with_a_club_run_left("JS")
    table.meld(0, "5C 6C 7C")
    table.lay_off(0, 1, "JS")
    assert table.kinds()[:2] == ["LaidOff", "RoundEnded"] and table.kinds()[-1] == "GameEnded"
    assert ended(table).winner == 0 and table.state.hands[0] == []


# --- penalties and scoring ------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "points"),
    [
        ("2S", 2),
        ("7H", 7),
        ("TD", 10),
        ("JC", 10),
        ("QS", 10),
        ("KH", 10),
        ("AD", 11),
        ("JK", 20),
    ],
)
def test_rami51_penalties_face_value_faces_10_ace_11_joker_20(code: str, points: int) -> None:
    for card in RAMI51.deck.ids_of(code):
        assert card_penalty(card, RAMI51) == points


SEED_HANDS = [
    RAMI,
    "JD JH JC 2S 3S 4S 5S 6H 7H 8H 9H KH 7D",
    "KS KD KC 8C 9C TC JC QS QH QD AS JK 3C",
    "6D 7D 8D 9D 5H 5S 5C TS TH TC 4H 4D QC",
]
"""Seats 1-3 each open in their first turn and keep K+7, A+JK+3 and 4+4+Q."""
SEED_MELDS = [
    ["JD JH JC", "2S 3S 4S 5S", "6H 7H 8H 9H"],
    ["KS KD KC", "8C 9C TC JC", "QS QH QD"],
    ["6D 7D 8D 9D", "5H 5S 5C", "TS TH TC"],
]


def play_seed_deal(winner_opens_first: bool) -> Table:
    table = rami51(SEED_HANDS, discard="2H", stock="3S 9S 6S 8D 2C")
    if winner_opens_first:
        table.draw(0)
        table.meld(0, "7S 8S 9S TS", "QD QH QC")
        table.discard(0, "3S")
    else:
        table.draw_and_throw(0)
    for seat, melds in enumerate(SEED_MELDS, start=1):
        table.draw(seat)
        drawn = table.events[0]
        assert isinstance(drawn, Drew)
        table.meld(seat, *melds)
        table.act(seat, table.discard_action(seat, table.deck.code(drawn.card)))
    assert [table.hand(s) for s in (1, 2, 3)] == ["KH 7D", "AS 3C JK", "4H 4D QC"]
    assert [hand_penalty(table.state.hands[s], RAMI51) for s in (1, 2, 3)] == [17, 34, 18]
    table.draw(0)
    drawn = table.events[0]
    assert isinstance(drawn, Drew)
    if winner_opens_first:
        table.meld(0, "2D 3D 4D", "5C 6C 7C")
    else:
        table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C")
    table.act(0, table.discard_action(0, table.deck.code(drawn.card)))
    return table


def test_rami51_seed_example_winner_scores_17_plus_34_plus_18_is_69() -> None:
    table = play_seed_deal(winner_opens_first=True)
    result = ended(table)
    assert result.winner == 0 and result.reason == EndReason.WENT_OUT
    # Only the cards in hand count: the opponents' melds are not deducted.
    assert result.penalties == (69, 0, 0, 0)
    assert table.state.totals == [69, 0, 0, 0]


def test_rami51_seed_example_rami_d_un_coup_doubles_69_to_138() -> None:
    # Seat 0 opens and empties its hand in one turn begun without having opened.
    table = play_seed_deal(winner_opens_first=False)
    assert ended(table).penalties == (138, 0, 0, 0)


def test_rami51_scoring_nothing_extra_for_an_opponent_who_never_opened() -> None:
    table = opened_with_a_club_run_left("9D")
    assert not table.state.opened[1]
    table.meld(0, "5C 6C 7C")
    table.discard(0, "9D")
    # Opened in an earlier turn: not doubled; the loner pays its hand, no more.
    assert ended(table).penalties == (LONER_PENALTY, 0)


# --- stock exhausted and blocked deals ------------------------------------------------


BLOCK_MELDS = [
    ["AH 2H 3H JK", "TD JD QD", "JK 7C 8C"],
    ["JK 8H 9H", "4C 5C 6C JK", "2D 3D 4D 5D"],
    ["9S 9D 9C", "JH JD JC", "2C 3C 4C 5C"],
]
"""Openings that lay all four jokers, so the stock holds none and every seat can
throw each card it draws."""


def blocked_deal(kept: list[str]) -> Table:
    """Each seat opens keeping ``kept[seat]``, then everyone draws and throws the
    card it drew until the deal blocks."""
    hands = [" ".join([*melds, keep]) for melds, keep in zip(BLOCK_MELDS, kept, strict=True)]
    table = rami51(hands, discard="5S", turn_cap=1000)
    for seat, melds in enumerate(BLOCK_MELDS):
        table.draw(seat)
        drawn = table.events[0]
        assert isinstance(drawn, Drew)
        table.meld(seat, *melds)
        table.act(seat, table.discard_action(seat, table.deck.code(drawn.card)))
    assert [table.hand(s) for s in range(3)] == [
        sorted_codes(parse_cards(k, RAMI51), RAMI51) for k in kept
    ]
    while table.state.phase != Phase.GAME_OVER:
        table.draw_and_throw(table.state.current)
        assert_conserved(table.state)
    return table


def test_rami51_stock_exhausted_reshuffled_at_most_twice_then_the_deal_blocks() -> None:
    table = blocked_deal(["KS 9H 6D", "TH 7S", "KH 8S 6H"])
    reshuffles = [e for e in table.log if isinstance(e, Reshuffled)]
    assert len(reshuffles) == 2 and table.state.reshuffles == 2
    for event in reshuffles:
        assert event.discard_top >= 0, "the top card stays on the discard pile"
    assert ended(table).reason == EndReason.BLOCKED
    assert table.kinds()[0] == "RoundEnded", "the third draw finds no stock: no card drawn"


def test_rami51_seed_example_blocked_hands_25_17_24_the_17_wins_and_scores_15() -> None:
    table = blocked_deal(["KS 9H 6D", "TH 7S", "KH 8S 6H"])
    assert [hand_penalty(h, RAMI51) for h in table.state.hands] == [25, 17, 24]
    result = ended(table)
    assert result.winner == 1 and result.penalties == (0, 15, 0)
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.winner == 1


def test_rami51_blocked_deal_ties_go_to_the_lowest_seat() -> None:
    table = blocked_deal(["9H 6D 2S", "TH 7S", "KH 8S 6H"])
    assert [hand_penalty(h, RAMI51) for h in table.state.hands] == [17, 17, 24]
    result = ended(table)
    assert result.winner == 0 and result.penalties == (7, 0, 0)


def test_rami51_blocked_when_a_reshuffle_finds_fewer_than_two_discards_never_doubled() -> None:
    # A 107-card variant dealt 53 each leaves no stock at all and one turned card:
    # the first draw needs a reshuffle that a one-card pile cannot give.
    variant = with_changes(RAMI51, jokers=3, hand_size=53)
    state = new_game(variant, 2)
    state, _ = apply(state, SYSTEM, Deal(tuple(variant.deck.ids()), 0), 0)
    assert state.stock == [] and len(state.discard) == 1
    state, events = apply(state, 0, DrawStock(), 0)
    result = next(e for e in events if isinstance(e, RoundEnded))
    assert result.reason == EndReason.BLOCKED
    light, heavy = sorted(hand_penalty(h, variant) for h in state.hands)
    # Nobody had opened, yet a blocked deal pays the bare difference.
    assert max(result.penalties) == heavy - light and min(result.penalties) == 0


# --- game length ----------------------------------------------------------------------


def go_out_at_once(table: Table, seat: int) -> None:
    """``seat`` holds RAMI and draws a card that it throws after laying the rest."""
    table.draw(seat)
    drawn = table.events[0]
    assert isinstance(drawn, Drew)
    table.meld(seat, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C")
    table.act(seat, table.discard_action(seat, table.deck.code(drawn.card)))


def test_rami51_game_length_default_one_deal_its_winner_wins() -> None:
    table = rami51([RAMI, LONER], stock="KS")
    assert table.state.options.rounds == 1 and table.state.options.target_score == 0
    go_out_at_once(table, 0)
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.winner == 0
    assert game.reason == EndReason.ROUNDS_PLAYED and game.totals == (188, 0)


def test_rami51_game_length_to_200_only_the_deal_winner_scores_dealer_moves() -> None:
    table = rami51([RAMI, LONER], stock="KS", target_score=200)
    go_out_at_once(table, 0)  # 2 x 94 = 188: not yet 200
    assert table.state.phase == Phase.DEAL and table.state.totals == [188, 0]
    table.deal([LONER, RAMI], "KD", "KS")
    dealt = table.events[0]
    assert isinstance(dealt, RoundDealt) and dealt.dealer == 0 and table.state.current == 1
    go_out_at_once(table, 1)
    # Seat 0 lost this deal: it adds nothing, its 94 points go to seat 1.
    assert table.state.phase == Phase.DEAL and table.state.totals == [188, 188]
    table.deal([RAMI, LONER], "KD", "KS")
    dealt = table.events[0]
    assert isinstance(dealt, RoundDealt) and dealt.dealer == 1 and table.state.current == 0
    go_out_at_once(table, 0)
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.reason == EndReason.TARGET_REACHED
    assert game.totals == (376, 188) and game.winner == 0, "the highest total wins"
    assert len(table.state.results) == 3


def test_rami51_to_200_is_a_rami51_option_only() -> None:
    assert effective_options(RAMI51, TableOptions(target_score=200)).target_score == 200
    for name in ("cafe", "classic", "contract"):
        with pytest.raises(ValueError, match="target score"):
            effective_options(preset(name), TableOptions(target_score=200))


def test_rami51_game_length_is_one_deal_or_to_200_never_an_elimination_cap() -> None:
    # The winner collects: a cap would put the leading player out of the game.
    for name in ("rami51", "contract"):
        with pytest.raises(ValueError, match="elimination cap"):
            effective_options(preset(name), TableOptions(elimination_cap=100))
    assert effective_options(CAFE, TableOptions(elimination_cap=500)).elimination_cap == 500


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
    table.act(1, table.swap(1, 1, "TS", lay_off=4))
    assert table.meld_codes(1) == "8S 9S TS" and table.meld_codes(4) == "4D 5D 6D 7D JK"
    assert joker not in table.state.hands[1]
