"""Elo across tables of 2-4 players: what a finished game does to ratings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.common.rating import DEFAULT_RATING, K_FACTOR, expected, updated

RATINGS = st.floats(600, 2800)


@given(st.lists(RATINGS, min_size=2, max_size=4), st.data())
def test_a_game_moves_no_points_in_or_out(ratings: list[float], data: st.DataObject) -> None:
    places = data.draw(st.lists(st.integers(0, 3), min_size=len(ratings), max_size=len(ratings)))
    new = updated(ratings, places)
    assert abs(sum(new) - sum(ratings)) < 1e-6


@given(st.lists(RATINGS, min_size=2, max_size=4))
def test_the_winner_gains_and_the_last_loses(ratings: list[float]) -> None:
    places = list(range(len(ratings)))
    new = updated(ratings, places)
    assert new[0] > ratings[0]
    assert new[-1] < ratings[-1]
    # Nobody moves by more than the K factor.
    assert all(abs(n - r) <= K_FACTOR for n, r in zip(new, ratings, strict=True))


def test_two_equal_players_move_half_the_k_factor() -> None:
    assert updated([DEFAULT_RATING] * 2, [0, 1]) == [
        DEFAULT_RATING + K_FACTOR / 2,
        DEFAULT_RATING - K_FACTOR / 2,
    ]
    assert updated([DEFAULT_RATING] * 2, [0, 0]) == [DEFAULT_RATING] * 2


def test_an_upset_moves_more_than_a_win_expected() -> None:
    underdog_wins = updated([1400.0, 1600.0], [0, 1])
    favourite_wins = updated([1400.0, 1600.0], [1, 0])
    assert underdog_wins[0] - 1400.0 > favourite_wins[1] - 1600.0 > 0
    assert abs(expected(1500.0, 1500.0) - 0.5) < 1e-12


def test_a_four_player_game_moves_a_rating_about_as_much_as_a_duel() -> None:
    duel = updated([DEFAULT_RATING] * 2, [0, 1])[0] - DEFAULT_RATING
    table = updated([DEFAULT_RATING] * 4, [0, 1, 2, 3])[0] - DEFAULT_RATING
    assert table == duel
