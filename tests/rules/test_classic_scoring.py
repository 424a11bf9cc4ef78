"""`classic`, going out, scoring and the end of the game: RULES.md §4, one test per
row and decision on going out, card values and scoring (rami sec, a joker left in
hand), elimination at 100 and buy-backs."""

from __future__ import annotations

import pytest

from services.game.rules import Phase, Reason, SeatStatus, TableOptions, hand_penalty, preset
from services.game.rules.events import (
    BoughtBack,
    Drew,
    EndReason,
    GameEnded,
    PlayerEliminated,
    RoundEnded,
)
from services.game.rules.ruleset import effective_options
from services.game.rules.scoring import card_penalty

from .helpers import Table
from .test_classic import CLASSIC, LONER, LONER_B, RAMI, RAMI_MELDS, classic

JOKER_LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C JK"
"""No meld it lays; 94 + a joker (20) = 114 points."""
CHEAP = "2S 3H 4D 5C 2H 3D 4C 5S 2D 3C 4S 5H 6S 6D"
"""54 points."""
HEAVY = "KS KH KD KC QS QH QD QC JS JH JD JC AD AH"
"""142 points."""


def ended(table: Table) -> RoundEnded:
    return next(e for e in table.log[::-1] if isinstance(e, RoundEnded))


def drawn_code(table: Table) -> str:
    drew = next(e for e in table.events if isinstance(e, Drew))
    return table.deck.code(drew.card)


def out_at_once(table: Table, seat: int) -> None:
    """``seat`` holds RAMI: it draws, lays all fourteen cards, throws the drawn one."""
    table.draw(seat)
    code = drawn_code(table)
    table.meld(seat, *RAMI_MELDS)
    table.discard(seat, code)


def open_then_out(table: Table, seat: int, others: list[int]) -> None:
    """``seat`` holds RAMI: it opens with two melds, the others draw and throw,
    then it lays the rest and throws its last card (no rami sec)."""
    table.draw(seat)
    code = drawn_code(table)
    table.meld(seat, *RAMI_MELDS[:2])
    table.discard(seat, code)
    for other in others:
        table.draw_and_throw(other)
    table.draw(seat)
    code = drawn_code(table)
    table.meld(seat, *RAMI_MELDS[2:])
    table.discard(seat, code)


# --- going out ------------------------------------------------------------------------


def test_classic_going_out_by_discarding_the_last_card() -> None:
    table = classic([RAMI, LONER], stock="KH")
    out_at_once(table, 0)
    assert table.kinds()[:2] == ["Discarded", "RoundEnded"]
    assert ended(table).winner == 0 and ended(table).reason == EndReason.WENT_OUT


def test_classic_going_out_by_melding_the_last_card() -> None:
    table = classic([RAMI, LONER], stock="9C")
    table.draw(0)
    table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C 8C 9C")
    assert table.kinds()[:2] == ["Melded", "RoundEnded"]
    assert table.state.hands[0] == [] and ended(table).winner == 0


def test_classic_going_out_decision_a_joker_may_be_discarded() -> None:
    table = classic([JOKER_LONER, LONER_B], stock="KH")
    table.draw(0)
    table.discard(0, "JK")  # fourteen cards left: in cafe this is refused
    assert table.top() == "JK"
    cafe = Table([RAMI.rsplit(" ", 1)[0], "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS JK"], "KD")
    cafe.draw_and_throw(0)
    cafe.draw(1)
    assert cafe.refuse(1, cafe.discard_action(1, "JK")).reason == Reason.JOKER_DISCARD_FORBIDDEN


# --- card values and scoring ----------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "points"),
    [
        ("JK", 20),
        ("AS", 11),
        ("JH", 10),
        ("QD", 10),
        ("KC", 10),
        ("TS", 10),
        ("9H", 9),
        ("2D", 2),
    ],
)
def test_classic_card_values_joker_20_ace_11_faces_10_others_face_value(
    code: str, points: int
) -> None:
    for card in CLASSIC.deck.ids_of(code):
        assert card_penalty(card, CLASSIC) == points


def test_classic_scoring_losers_add_their_hands_the_winner_scores_minus_10() -> None:
    table = classic([RAMI, LONER, LONER_B], stock="5D 6H 7D 8H")
    open_then_out(table, 0, [1, 2])
    assert ended(table).penalties == (-10, 96, 96)


def test_classic_scoring_a_joker_left_in_hand_doubles_that_players_points() -> None:
    table = classic([RAMI, JOKER_LONER, LONER_B], stock="5D 6H 7D 8H")
    open_then_out(table, 0, [1, 2])
    assert hand_penalty(table.state.hands[1], CLASSIC) == 114
    assert ended(table).penalties == (-10, 228, 96)


def test_classic_scoring_rami_sec_doubles_the_losers_and_the_bonus_minus_20() -> None:
    table = classic([RAMI, LONER, LONER_B], stock="5D")
    out_at_once(table, 0)
    assert ended(table).penalties == (-20, 192, 192)


def test_classic_scoring_decision_both_doublings_combine_times_four() -> None:
    table = classic([RAMI, JOKER_LONER, LONER_B], stock="5D")
    out_at_once(table, 0)
    assert ended(table).penalties == (-20, 4 * 114, 2 * 96)


# --- game end: elimination at 100, buy-backs ------------------------------------------


def test_classic_game_end_a_player_reaching_100_is_eliminated() -> None:
    table = classic([RAMI, CHEAP, HEAVY], stock="5D 6H 7D 8H")
    assert table.state.options.elimination_cap == 100
    open_then_out(table, 0, [1, 2])
    assert ended(table).penalties == (-10, 54, 142)
    assert PlayerEliminated(2, 142) in table.events
    assert table.state.status[2] == SeatStatus.ELIMINATED
    assert table.state.phase == Phase.DEAL


def test_classic_game_end_buy_back_restarts_at_the_highest_score_still_in_the_game() -> None:
    table = classic([RAMI, CHEAP, HEAVY], stock="5D 6H 7D 8H", buy_backs=1)
    open_then_out(table, 0, [1, 2])  # -10, 54, 142
    assert not any(isinstance(e, PlayerEliminated) for e in table.events)
    assert BoughtBack(2, 54, 1) in table.events, "every seat is told of the buy-back"
    assert table.state.totals == [-10, 54, 54], "back in at 54, the highest of -10 and 54"
    assert table.state.buy_backs == [0, 0, 1]
    assert table.state.status[2] == SeatStatus.PLAYING
    # Deal 2: seat 1 wins; seat 2 reaches 100 again, with no buy-back left.
    table.deal([CHEAP, RAMI, HEAVY], "KD", "5D 6H 7D 8H")
    open_then_out(table, 1, [2, 0])
    assert table.state.totals == [44, 44, 196]
    assert PlayerEliminated(2, 196) in table.events


def test_classic_game_end_up_to_three_buy_backs_then_the_last_player_left_wins() -> None:
    table = classic([RAMI, HEAVY], stock="KS", buy_backs=3)
    restarts = []
    bought = []
    for deal in range(4):
        if deal:
            table.deal([RAMI, HEAVY], "KD", "KS")
        if table.state.current == 1:
            table.draw_and_throw(1)
        out_at_once(table, 0)  # rami sec: -20 each deal, 2 x 142 for seat 1
        restarts.append(table.state.totals[1])
        bought += [e for e in table.events if isinstance(e, BoughtBack)]
    assert restarts[:3] == [-20, -40, -60], "back in at the winner's total each time"
    assert bought == [BoughtBack(1, -20, 1), BoughtBack(1, -40, 2), BoughtBack(1, -60, 3)]
    assert table.state.buy_backs == [0, 3]
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.reason == EndReason.LAST_STANDING
    assert game.winner == 0 and game.totals == (-80, -60 + 284)
    assert table.state.status[1] == SeatStatus.ELIMINATED


def test_classic_buy_backs_are_a_classic_option_of_at_most_three() -> None:
    assert effective_options(CLASSIC, TableOptions(buy_backs=3)).buy_backs == 3
    with pytest.raises(ValueError):
        effective_options(CLASSIC, TableOptions(buy_backs=4))
    for name in ("cafe", "rami51", "contract"):
        with pytest.raises(ValueError, match="buy-backs"):
            effective_options(preset(name), TableOptions(buy_backs=1))
