"""Plackett-Luce ratings across tables of 2-6 players: what a finished game does to
them, and how a former Elo rating is carried over."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st
from openskill.models import PlackettLuce

from services.common.rating import (
    BETA,
    DEFAULT_DEVIATION,
    DEFAULT_RATING,
    DEVIATION_HALF_GAMES,
    SETTLED_DEVIATION,
    TAU,
    Rating,
    carried_over_deviation,
    games_behind,
    updated,
)

RATINGS = st.builds(
    Rating, st.floats(600, 2800), st.floats(SETTLED_DEVIATION / 2, DEFAULT_DEVIATION)
)


@st.composite
def games(draw: st.DrawFn) -> tuple[list[Rating], list[int]]:
    """A table of 2-6 players and their places, ties anywhere."""
    ratings = draw(st.lists(RATINGS, min_size=2, max_size=6))
    n = len(ratings)
    places = draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    return ratings, places


@given(games())
def test_a_sole_winner_never_loses_and_a_sole_last_never_gains(
    game: tuple[list[Rating], list[int]],
) -> None:
    ratings, places = game
    new = updated(ratings, places)
    best, worst = min(places), max(places)
    if places.count(best) == 1 and best != worst:
        i = places.index(best)
        assert new[i].mu >= ratings[i].mu
    if places.count(worst) == 1 and best != worst:
        i = places.index(worst)
        assert new[i].mu <= ratings[i].mu


@given(games())
def test_no_deviation_ever_grows(game: tuple[list[Rating], list[int]]) -> None:
    ratings, places = game
    new = updated(ratings, places)
    assert all(n.sigma <= r.sigma for n, r in zip(new, ratings, strict=True))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(0, 7), min_size=2, max_size=6, unique=True),
            st.lists(st.integers(0, 5), min_size=6, max_size=6),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_each_game_played_shrinks_a_newcomers_deviation(
    played: list[tuple[list[int], list[int]]],
) -> None:
    """Eight newcomers play games of 2-6 among themselves, whatever the places:
    every game a player sits at makes their deviation smaller."""
    pool = [Rating(DEFAULT_RATING, DEFAULT_DEVIATION)] * 8
    for seated, places in played:
        before = [pool[p] for p in seated]
        after = updated(before, places[: len(seated)])
        for player, old, new in zip(seated, before, after, strict=True):
            assert new.sigma < old.sigma
            pool[player] = new


def test_newcomers_who_draw_stay_where_they_were() -> None:
    newcomer = Rating(DEFAULT_RATING, DEFAULT_DEVIATION)
    for n in range(2, 7):
        assert all(r.mu == DEFAULT_RATING for r in updated([newcomer] * n, [0] * n))


def test_a_win_against_stronger_players_gains_more() -> None:
    def gain(opponent: float) -> float:
        ratings = [Rating(1500.0, 80.0), Rating(opponent, 80.0), Rating(opponent, 80.0)]
        return updated(ratings, [0, 1, 2])[0].mu - 1500.0

    assert gain(1700.0) > gain(1500.0) > gain(1300.0) > 0


def test_a_lone_player_is_left_alone() -> None:
    assert updated([Rating(1600.0, 50.0)], [0]) == [Rating(1600.0, 50.0)]


def test_the_scale_is_elos_for_settled_players() -> None:
    """A win moves a rating in proportion to how unexpected it was, as in Elo: for
    settled players (deviation small next to beta) 400 points apart, the model
    expects the stronger to win 10 times out of 11, so the weaker's win moves
    ten times as far as the stronger's."""
    strong, weak = Rating(1900.0, 1.0), Rating(1500.0, 1.0)
    expected_win = updated([strong, weak], [0, 1])[0].mu - strong.mu
    upset = updated([strong, weak], [1, 0])[1].mu - weak.mu
    assert math.isclose(upset / expected_win, 10.0, rel_tol=1e-3)


def _duels_between_equals(games: int) -> list[float]:
    """The model's own deviation after 0, 1, ... ``games`` games of a newcomer
    against an opponent as strong and as unsure as they are."""
    model = PlackettLuce(
        mu=DEFAULT_RATING, sigma=DEFAULT_DEVIATION, beta=BETA, tau=TAU, limit_sigma=True
    )
    sigma, out = DEFAULT_DEVIATION, [DEFAULT_DEVIATION]
    for _ in range(games):
        me, other = model.rating(sigma=sigma), model.rating(sigma=sigma)
        [[me], _] = model.rate([[me], [other]], ranks=[0.0, 1.0])
        sigma = me.sigma
        out.append(sigma)
    return out


def test_a_carried_over_deviation_follows_the_models_own() -> None:
    model = _duels_between_equals(1500)
    assert math.isclose(model[-1], SETTLED_DEVIATION, rel_tol=1e-3), model[-1]
    for games in (*range(0, 100), 150, 200, 300, 500, 1000, 1500):
        carried = carried_over_deviation(games)
        assert math.isclose(carried, model[games], rel_tol=0.03), (games, carried, model[games])
    assert carried_over_deviation(0) == DEFAULT_DEVIATION
    excess = math.sqrt(DEFAULT_DEVIATION**2 - SETTLED_DEVIATION**2)
    half = carried_over_deviation(int(DEVIATION_HALF_GAMES))
    assert math.isclose(math.sqrt(half**2 - SETTLED_DEVIATION**2), excess / 2)


def test_a_former_rating_counts_the_games_its_distance_needs_at_least() -> None:
    assert games_behind(1500.0, 0) == 0
    assert games_behind(1500.0, 12) == 12
    assert games_behind(1564.0, 0) == 2  # two steps of 32 at the most
    assert games_behind(1436.5, 1) == 2
    assert games_behind(1436.5, 40) == 40
