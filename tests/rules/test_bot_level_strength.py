"""The levels in order of strength, measured: over the same seeded two-seat cafe
games (each level on each seat half the time), strong beats normal and normal
beats easy, on average and in most games. A measure, not a timing: the games
are the engine's own, so the figures are the same on every run.

Cafe scores the hand a player is left with (lower is better): the margin is
how many points fewer the stronger level is left with, per game.
"""

from __future__ import annotations

import random

from services.game.rules import preset
from services.game.rules.levels import BotLevel, LevelBot
from services.game.rules.simulate import play_game

CAFE = preset("cafe")
GAMES = 200
"""Enough for the smaller gap (strong over normal, about 10 points a game with a
standard error near 2) to stand clear of chance; a few seconds of play."""


def _duel(stronger: BotLevel, weaker: BotLevel) -> tuple[float, float]:
    """The stronger level's mean margin and share of games won."""
    margin = wins = 0
    for seed in range(GAMES):
        seat = seed % 2
        players = [LevelBot(weaker), LevelBot(weaker)]
        players[seat] = LevelBot(stronger)
        final = play_game(CAFE, players, random.Random(seed))
        margin += final.totals[1 - seat] - final.totals[seat]
        wins += final.winner == seat
    return margin / GAMES, wins / GAMES


def test_strong_beats_normal() -> None:
    margin, won = _duel(BotLevel.STRONG, BotLevel.NORMAL)
    assert margin > 4 and won > 0.55, (margin, won)


def test_normal_beats_easy() -> None:
    margin, won = _duel(BotLevel.NORMAL, BotLevel.EASY)
    assert margin > 4 and won > 0.55, (margin, won)
