"""RULES.md §6 for every rule set: the per-turn timer and the turn cap (table
options, 45 s and 120 by default) with `cafe`'s timeout behaviour, except that a
card taken from the discard pile that had to be used this turn (`classic`;
`rami51` before opening) goes back on the pile before the turn passes; and the
decision on scoring a capped round per rule set (ties: the lowest seat)."""

from __future__ import annotations

import pytest

from services.game.rules import Phase, TableOptions, hand_penalty, preset
from services.game.rules.events import (
    Discarded,
    EndReason,
    RoundEnded,
    TurnBegan,
    TurnPassed,
)
from services.game.rules.ruleset import effective_options

from .helpers import Table, assert_conserved

CAFE, RAMI51, CLASSIC, CONTRACT = (preset(n) for n in ("cafe", "rami51", "classic", "contract"))

HANDS = {
    "cafe": ["AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C", "AD 3D 5D 7D 9D JD KD 2C 4C 6C 8C TC QC"],
    "rami51": ["AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C", "AD 3D 5D 7D 9D JD KD 2C 4C 6C 8C TC QC"],
    "classic": [
        "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C 2C",
        "AD 3D 5D 7D 9D JD 2C 4C 6C 8C TC QC 9H 2S",
    ],
    "contract": ["AS 3H 5S 8H 9D JH 2H 4S 6C TC", "AH 3S 5H 8D 9C JD 2D 4H 6S TD"],
}
"""Two hands per rule set with nothing to lay."""


def ended(table: Table) -> RoundEnded:
    return next(e for e in table.log[::-1] if isinstance(e, RoundEnded))


@pytest.mark.parametrize("name", ["cafe", "rami51", "classic", "contract"])
def test_turn_timer_45_seconds_by_default_and_a_table_option_in_every_rule_set(
    name: str,
) -> None:
    table = Table(HANDS[name], "KH", ruleset=preset(name))
    began = table.events[-1]
    assert isinstance(began, TurnBegan) and began.deadline_ms == 45_000
    table = Table(
        HANDS[name], "KH", ruleset=preset(name), options=TableOptions(turn_timer_ms=20_000)
    )
    assert table.state.deadline_ms == 20_000
    events = table.timeout()  # before the draw: the turn passes
    assert isinstance(events[0], TurnPassed) and table.state.current == 1
    assert table.state.deadline_ms == 40_000


@pytest.mark.parametrize("name", ["cafe", "rami51", "classic", "contract"])
def test_turn_cap_120_by_default_and_a_table_option_in_every_rule_set(name: str) -> None:
    table = Table(HANDS[name], "KH", ruleset=preset(name))
    assert table.state.options.turn_cap == 120
    table = Table(HANDS[name], "KH", ruleset=preset(name), options=TableOptions(turn_cap=7))
    table.pass_turns(6)
    assert table.state.phase == Phase.DRAW
    table.pass_turns(1)
    assert ended(table).round_no == 1


# --- the timeout and the card taken from the discard pile -------------------------------


JOKERS_NO_OPENING = "2S 2D JK 3S 4S JK 8C TC QH 3C 7D 9D KC 5H"
"""With the 2H: melds worth 53 by their penalties (jokers at 20), so the take is
allowed, but 20 points at most as an opening (2D 2H JK, 2S 3S 4S JK)."""


@pytest.mark.parametrize(
    ("name", "reason", "hand"),
    [
        # The card makes melds, but no opening of 51: its time runs out.
        ("classic", "timeout", JOKERS_NO_OPENING),
        # It could still put the card back (Reposer) and draw: the clock runs.
        ("rami51", "timeout", None),
    ],
)
def test_timeout_puts_back_a_taken_discard_that_had_to_be_used_then_the_turn_passes(
    name: str, reason: str, hand: str | None
) -> None:
    hands = [hand, HANDS[name][1]] if hand else HANDS[name]
    table = Table(hands, "2H" if hand else "KH", ruleset=preset(name))
    kh = table.state.discard[-1]
    hand = sorted(table.state.hands[0])
    table.take(0)
    assert (table.state.deadline_ms == table.now) == (reason == "no_move")
    events = table.timeout()
    assert [type(e).__name__ for e in events] == ["TurnPassed", "TurnBegan"]
    assert events[0] == TurnPassed(0, reason)
    assert table.state.discard == [kh] and sorted(table.state.hands[0]) == hand
    assert table.state.current == 1 and table.state.taken_discard == -1
    assert_conserved(table.state)


def test_timeout_classic_after_opening_puts_back_an_unused_taken_discard_lay_offs_stay() -> None:
    opener = "KS KH KD 7S 8S 9S 2D 4D 6D 8C TC QH 3C 6S"
    table = Table([opener, HANDS["classic"][1]], "9C", "QD TS", ruleset=CLASSIC)
    table.draw(0)
    table.meld(0, "KS KH KD", "7S 8S 9S")
    table.discard(0, "QD")
    table.draw_and_throw(1)  # the TS, which fits 7S 8S 9S
    table.take(0)
    ten = table.state.taken_discard
    table.lay_off(0, 2, "6S")  # a move, but not with the card taken
    events = table.timeout()
    assert [type(e).__name__ for e in events] == ["TurnPassed", "TurnBegan"]
    assert table.state.discard[-1] == ten and ten not in table.state.hands[0]
    assert table.meld_codes(2) == "6S 7S 8S 9S"
    assert_conserved(table.state)


def test_timeout_rami51_after_opening_the_taken_discard_stays_and_a_card_is_thrown() -> None:
    opener = "KS KH KD TS JS QS 9H 9C 9D 2C 5H 7H 4D"
    table = Table([opener, HANDS["rami51"][1]], "AH", "6S 3S", ruleset=RAMI51)
    table.draw(0)
    table.meld(0, "KS KH KD", "TS JS QS")
    table.discard(0, "6S")
    table.draw_and_throw(1)
    table.take(0)  # opened: the card taken needs no meld
    events = table.timeout()
    thrown = events[0]
    assert isinstance(thrown, Discarded) and thrown.automatic
    assert table.deck.code(thrown.card) != "3S" and "3S" in table.hand(0).split()


def test_timeout_contract_the_taken_discard_stays_and_a_card_is_thrown_never_a_joker() -> None:
    hand = "JK 3H 5S 8H 9D JH 2H 4S 6C TC"
    table = Table([hand, HANDS["contract"][1]], "AD", ruleset=CONTRACT)
    table.take(0)
    thrown = table.timeout()[0]
    assert isinstance(thrown, Discarded) and thrown.automatic
    assert table.deck.code(thrown.card) == "JH", "the costliest card, not the ace taken"
    assert "AD" in table.hand(0).split() and "JK" in table.hand(0).split()


# --- the turn cap, scored per rule set ----------------------------------------------------

LONER13 = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C"  # 94 (no joker: the same in every set)
CHEAP13 = "2S 3H 4D 5C 2H 3D 4C 5S 2D 3C 4S 5H 6S"  # 48
CHEAP13_B = "2S 3H 4D 5C 2H 3D 4C 5S 2C 3S 4H 5D 6H"  # 48
HEAVY13 = "KS KH KD KC QS QH QD QC JS JH JD JC AD"  # 131


def capped(ruleset_name: str, hands: list[str]) -> Table:
    table = Table(hands, "KH", ruleset=preset(ruleset_name))
    table.pass_turns(120)
    return table


def test_turn_cap_decision_rami51_scores_the_capped_deal_as_a_blocked_deal() -> None:
    table = capped("rami51", [LONER13, CHEAP13, HEAVY13])
    result = ended(table)
    assert result.reason == EndReason.BLOCKED and result.winner == 1
    # (94 - 48) + (131 - 48); never doubled, though the winner never opened.
    assert result.penalties == (0, 129, 0)


def test_turn_cap_decision_rami51_ties_go_to_the_lowest_seat() -> None:
    table = capped("rami51", [HEAVY13, CHEAP13, CHEAP13_B])
    result = ended(table)
    assert result.winner == 1 and result.penalties == (0, 131 - 48, 0)


def test_turn_cap_decision_classic_lightest_wins_minus_10_others_pay_jokers_doubled() -> None:
    hands = [
        "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C 2C",  # 96
        "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C JK",  # 94 + 20 = 114, doubled
        "AD 3D 5D 7D 9D JD 2C 4C 6C 8C TC QC 9H 2S",  # 96: a tie with seat 0
    ]
    table = capped("classic", hands)
    assert [hand_penalty(h, CLASSIC) for h in table.state.hands] == [96, 114, 96]
    result = ended(table)
    assert result.reason == EndReason.TURN_CAP and result.winner == 0
    assert result.penalties == (-10, 228, 96)


def test_turn_cap_decision_contract_nobody_went_out_every_player_scores_the_hand() -> None:
    table = capped("contract", HANDS["contract"])
    result = ended(table)
    penalties = tuple(hand_penalty(h, CONTRACT) for h in table.state.hands)
    assert result.reason == EndReason.TURN_CAP and result.winner == -1
    assert result.penalties == penalties and all(penalties)
    assert table.state.phase == Phase.DEAL and table.state.round_no == 1


@pytest.mark.parametrize(
    ("name", "options", "says"),
    [
        ("contract", {}, "played over its 7 deals"),
        ("classic", {}, "elimination cap"),
        ("cafe", {"elimination_cap": 500}, "elimination cap"),
        ("rami51", {"target_score": 200}, "to 200 is played until a deal's winner"),
    ],
)
def test_rounds_are_refused_where_something_else_ends_the_game(
    name: str, options: dict[str, int], says: str
) -> None:
    """Ignored there, a number of rounds is refused rather than taken silently."""
    ruleset = preset(name)
    effective_options(ruleset, TableOptions(**options))  # the default (1) is fine
    with pytest.raises(ValueError, match=says):
        effective_options(ruleset, TableOptions(rounds=3, **options))


@pytest.mark.parametrize("name", ["cafe", "rami51"])
def test_rounds_are_a_table_option_where_they_end_the_game(name: str) -> None:
    assert effective_options(preset(name), TableOptions(rounds=3)).rounds == 3


@pytest.mark.parametrize("name", ["cafe", "rami51", "classic"])
def test_a_claim_window_is_refused_where_nobody_claims(name: str) -> None:
    effective_options(preset(name), TableOptions())
    with pytest.raises(ValueError, match="has no claim window"):
        effective_options(preset(name), TableOptions(claim_window_ms=5_000))
    assert effective_options(preset("contract"), TableOptions(claim_window_ms=5_000))
