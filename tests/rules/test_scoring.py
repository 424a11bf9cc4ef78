"""RULES.md §2 row `scoring`, and the seed text's counts (R♠ D♥ V♣ A♦ = 41;
10♠ V♠ D♠ = 30 and 9♥ 9♣ 9♦ = 27, 57 for an opening)."""

from __future__ import annotations

import pytest

from services.game.rules import hand_penalty, parse_cards
from services.game.rules.events import RoundEnded
from services.game.rules.melds import check_meld
from services.game.rules.scoring import card_penalty, meld_points

from .helpers import CAFE, Table

RAMI = "7S 8S 9S TS QD QH QC 2D 3D 4D 5C 6C 7C"
"""Thirteen cards that go down at once: seat 0 goes out on its first turn."""
LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C"
LONER_PENALTY = 11 + 3 + 5 + 7 + 9 + 10 + 2 + 4 + 6 + 8 + 10 + 10 + 9


@pytest.mark.parametrize(
    ("code", "points"),
    [
        ("2S", 2),
        ("5H", 5),
        ("9D", 9),
        ("TC", 10),
        ("JS", 10),
        ("QH", 10),
        ("KD", 10),
        ("AC", 11),
        ("JK", 25),
    ],
)
def test_scoring_card_penalties_face_value_faces_ten_ace_eleven_joker_25(
    code: str, points: int
) -> None:
    for card in CAFE.deck.ids_of(code):
        assert card_penalty(card, CAFE) == points


def test_scoring_seed_example_ks_qh_jc_ad_is_41() -> None:
    assert hand_penalty(parse_cards("KS QH JC AD", CAFE), CAFE) == 41
    assert hand_penalty(parse_cards("K♠ Q♥ J♣ A♦", CAFE), CAFE) == 41
    assert hand_penalty([], CAFE) == 0


def test_seed_example_opening_count_10s_js_qs_30_and_9h_9c_9d_27_make_57() -> None:
    run = check_meld(parse_cards("TS JS QS", CAFE), CAFE)
    group = check_meld(parse_cards("9H 9C 9D", CAFE), CAFE)
    assert meld_points(run, CAFE) == 30
    assert meld_points(group, CAFE) == 27
    assert meld_points(run, CAFE) + meld_points(group, CAFE) == 57


def test_meld_points_count_a_joker_as_its_card_and_the_ace_by_its_place() -> None:
    assert meld_points(check_meld(parse_cards("AS 2S 3S", CAFE), CAFE), CAFE) == 1 + 2 + 3
    assert meld_points(check_meld(parse_cards("QS KS AS", CAFE), CAFE), CAFE) == 31
    assert meld_points(check_meld(parse_cards("8S 9S JK", CAFE), CAFE), CAFE) == 27
    assert meld_points(check_meld(parse_cards("AS AH JK", CAFE), CAFE), CAFE) == 33


def test_scoring_round_end_losers_pay_their_hand_the_winner_scores_zero() -> None:
    table = Table([RAMI, LONER, "2C 3C 4S 5H 6D 7C 8H 9D TS JC QD KH JK"], "KH", "KD")
    table.draw(0)
    table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C")
    ended = table.discard(0, "KD")[1]
    assert isinstance(ended, RoundEnded)
    third = 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 10 + 10 + 10 + 25
    assert ended.penalties == (0, LONER_PENALTY, third)
    assert ended.totals == (0, LONER_PENALTY, third)
    assert table.state.totals == [0, LONER_PENALTY, third]
