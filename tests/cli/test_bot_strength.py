"""The engine's bots, which `rummy bots` and the server's bot seats play with.

Engine-level games over fixed seeds: the greedy bot must clearly beat the
random player, and against itself it must win about half the time (a bot
that wins far more from one seat would point at a bias in the game itself).
"""

from __future__ import annotations

import random

from services.game.rules import preset
from services.game.rules.bots import GreedyBot, RandomPlayer
from services.game.rules.simulate import Player, play_game

CAFE = preset("cafe")


def test_the_greedy_bot_beats_the_random_player_nine_times_in_ten() -> None:
    games = 100
    wins = 0
    for seed in range(games):
        greedy_seat = seed % 2  # each seat half the time
        players: list[Player] = [RandomPlayer(random.Random(10_000 + seed))] * 2
        players[greedy_seat] = GreedyBot()
        final = play_game(CAFE, players, random.Random(seed))
        wins += final.winner == greedy_seat
    assert wins >= 0.9 * games, f"greedy won {wins} of {games}"


def test_the_greedy_bot_against_itself_wins_about_half() -> None:
    games = 200
    first_seat_wins = sum(
        play_game(CAFE, [GreedyBot(), GreedyBot()], random.Random(seed)).winner == 0
        for seed in range(games)
    )
    assert 0.35 * games <= first_seat_wins <= 0.65 * games, f"seat 0 won {first_seat_wins}"
