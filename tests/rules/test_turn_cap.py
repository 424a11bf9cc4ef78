"""RULES.md §2 row `turn cap` and its decisions: a turn is one player's turn,
timed-out turns included; the 120th turn completes, then the round ends; the
smallest hand in points wins (ties: the lowest seat) and scores 0, every other
player scores their own hand."""

from __future__ import annotations

from services.game.rules import Phase
from services.game.rules.events import Discarded, EndReason, Melded, RoundEnded
from services.game.rules.ruleset import TURN_CAP

from .helpers import Table

HEAVY = "KS KH KD KC QS QH QD QC JS JH JD JC AD"  # 131
LIGHT_A = "2S 3H 4D 5C 6S 7H 8D 9C TS JH QD KC AS"  # 95
LIGHT_B = "2H 3D 4C 5S 6H 7D 8C 9S TH JD QC KS AH"  # 95, the same
MELDER = "7S 8S 9S AC AH 2D 4D 6C 8H TC QH KD 3C"


def test_turn_cap_120_the_120th_turn_completes_then_the_round_ends() -> None:
    table = Table([HEAVY, MELDER], "JK", "5D")
    assert TURN_CAP == 120 and table.state.options.turn_cap == 120
    table.pass_turns(119)  # timed-out turns count
    state = table.state
    assert state.turn == 120 and state.current == 1 and state.phase == Phase.DRAW
    assert not any(isinstance(e, RoundEnded) for e in table.log)
    table.draw(1)
    table.meld(1, "7S 8S 9S")  # the 120th turn is played in full...
    assert isinstance(table.events[0], Melded) and table.state.phase == Phase.PLAY
    events = table.discard(1, "KD")
    assert isinstance(events[0], Discarded)  # ...its discard, then the end
    ended = events[1]
    assert isinstance(ended, RoundEnded) and ended.reason == EndReason.TURN_CAP
    # Seat 1 keeps 70 points (AC AH 2D 4D 6C 8H TC QH 3C 5D), seat 0 131.
    assert ended.winner == 1
    assert ended.penalties == (131, 0)


def test_turn_cap_smallest_hand_in_points_wins_and_others_pay_their_hands() -> None:
    table = Table([HEAVY, LIGHT_A], "JK")
    table.pass_turns(120)
    ended = next(e for e in table.events if isinstance(e, RoundEnded))
    assert isinstance(ended, RoundEnded) and ended.reason == EndReason.TURN_CAP
    assert ended.winner == 1 and ended.penalties == (131, 0)
    assert table.state.phase == Phase.GAME_OVER


def test_turn_cap_ties_go_to_the_lowest_seat() -> None:
    table = Table([HEAVY, LIGHT_B, LIGHT_A], "JK")
    table.pass_turns(120)  # turn 120 is seat 2's: it does not decide the tie
    ended = next(e for e in table.events if isinstance(e, RoundEnded))
    assert isinstance(ended, RoundEnded) and ended.reason == EndReason.TURN_CAP
    assert ended.winner == 1 and ended.penalties == (131, 0, 95)


def test_turn_cap_counts_every_turn_of_the_round_not_of_a_seat() -> None:
    table = Table([HEAVY, LIGHT_A, LIGHT_B, MELDER], "JK")
    table.pass_turns(119)
    assert table.state.phase == Phase.DRAW
    table.pass_turns(1)
    assert any(isinstance(e, RoundEnded) for e in table.events)
