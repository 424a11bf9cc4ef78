"""Places at the end of a game, as ratings use them: the winner first, then the
seats still playing by their totals, read the way each rule set scores (penalty
points count against a player; in `rami51` the points won count for them),
equal totals sharing a place, and every seat that left or was eliminated last."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.game.rules.rounds import final_places
from services.game.rules.ruleset import CAFE, RAMI51, Ruleset
from services.game.rules.state import GameState, Phase, SeatStatus, new_game


def ended(ruleset: Ruleset, totals: list[int], winner: int, out: tuple[int, ...] = ()) -> GameState:
    state = new_game(ruleset, len(totals))
    state.totals = list(totals)
    state.winner = winner
    state.phase = Phase.GAME_OVER
    for seat in out:
        state.status[seat] = SeatStatus.ELIMINATED
    return state


def test_final_places_penalty_points_count_against_a_player() -> None:
    assert final_places(ended(CAFE, [12, 80, 40, 150], winner=0)) == {0: 0, 2: 1, 1: 2, 3: 3}


def test_final_places_rami51_points_won_count_for_a_player() -> None:
    assert final_places(ended(RAMI51, [200, 150, 0], winner=0)) == {0: 0, 1: 1, 2: 2}


def test_final_places_equal_totals_share_a_place_whatever_the_seats() -> None:
    assert final_places(ended(CAFE, [0, 30, 30, 50], winner=0)) == {0: 0, 1: 1, 2: 1, 3: 3}


def test_final_places_seats_out_of_the_game_share_the_last_place() -> None:
    places = final_places(ended(CAFE, [40, 101, 10, 120], winner=2, out=(1, 3)))
    assert places == {2: 0, 0: 1, 1: 2, 3: 2}


def test_final_places_the_declared_winner_is_first_even_on_equal_totals() -> None:
    assert final_places(ended(CAFE, [20, 20], winner=1)) == {1: 0, 0: 1}


@given(
    st.lists(st.integers(0, 300), min_size=2, max_size=4),
    st.data(),
)
def test_final_places_a_better_total_never_places_a_player_lower(
    totals: list[int], data: st.DataObject
) -> None:
    for ruleset, better in ((CAFE, int.__lt__), (RAMI51, int.__gt__)):
        winner = data.draw(st.integers(0, len(totals) - 1))
        places = final_places(ended(ruleset, totals, winner))
        assert places[winner] == 0 and sorted(places) == list(range(len(totals)))
        for a in range(len(totals)):
            for b in range(len(totals)):
                if winner not in (a, b) and better(totals[a], totals[b]):
                    assert places[a] < places[b]
                if winner not in (a, b) and totals[a] == totals[b]:
                    assert places[a] == places[b]
