"""A player's standing in a rule set (`player_standings`), and what a finished
game changes in it and in the leaderboards' rating buckets (`rating_buckets`).

Plain values in, plain values out: `results` reads the kept standings and the
new ratings in the game's commit, and writes what this module works out.

The buckets count a rule set's ranked players (a rated game there) by their
rating at two levels: by its whole part (level 0) and by 64ths of a point
(level 1). A player's rank is the players of the level-0 buckets above theirs (a
sum over a few hundred rows at most), of the fine buckets above theirs within
the same point (63 rows at most) and those ahead of them in their own fine
bucket (an index range of a few): its cost does not grow with the number of
players, where counting every entry ahead, or every one in their point (where
ratings cluster, thousands), would.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from services.common.rating import DEFAULT_RATING, Rating

START_RATING = DEFAULT_RATING
"""A rule set's standing before any rated game: the ratings' own start."""


FINE = 64
"""Level-1 buckets to a point of rating. A power of two, so that rating * FINE is
exact in floating point: a rating is in fine bucket k exactly when
k / FINE <= rating < (k + 1) / FINE, and fine bucket k lies within point
k // FINE, in SQL as in Python."""


def buckets(rating: float) -> tuple[tuple[int, int], ...]:
    """The (level, bucket) a rating counts in at each level (as SQL's floor() puts
    them): its whole part, then its 64ths."""
    return (0, math.floor(rating)), (1, math.floor(rating * FINE))


@dataclass(frozen=True, slots=True)
class Standing:
    games: int = 0
    wins: int = 0
    streak: int = 0
    """Wins in a row (> 0), or games in a row without a win (< 0), up to the last."""
    rated_games: int = 0
    rating: float = START_RATING
    deviation: float | None = None
    last_game_at: datetime | None = None
    """None only before the first game."""

    @property
    def ranked(self) -> bool:
        return self.rated_games > 0


@dataclass(frozen=True, slots=True)
class Seated:
    """A person's part in the finished game, and their rating in its rule set."""

    player_id: str
    won: bool
    start: Rating
    """Their rating in the rule set before the game: their standing's, or, before
    their first game there, the one carried over for them (`players.rating`)."""
    rating: Rating | None = None
    """After the game, for a rated one; None: the game rated nobody."""


@dataclass(frozen=True, slots=True)
class Change:
    player_id: str
    ruleset: str
    standing: Standing


def changes(
    kept: Mapping[tuple[str, str], Standing], ruleset: str, people: Sequence[Seated]
) -> list[Change]:
    """The standings the game changes: each person's in its rule set, and there
    only (a rating is the rule set's own)."""
    out: list[Change] = []
    for person in people:
        start = Standing(rating=person.start.mu, deviation=person.start.sigma)
        was = kept.get((person.player_id, ruleset), start)
        won = person.won
        streak = max(was.streak, 0) + 1 if won else min(was.streak, 0) - 1
        now = replace(
            was,
            games=was.games + 1,
            wins=was.wins + won,
            streak=streak,
            rated_games=was.rated_games + (person.rating is not None),
        )
        if person.rating is not None:
            now = replace(now, rating=person.rating.mu, deviation=person.rating.sigma)
        out.append(Change(person.player_id, ruleset, now))
    return out


def bucket_moves(
    kept: Mapping[tuple[str, str], Standing], made: Sequence[Change]
) -> dict[tuple[str, int, int], int]:
    """What ``made`` adds to each (rule set, level, bucket)'s count of ranked
    players, in that order; buckets left as they were are left out."""
    moves: Counter[tuple[str, int, int]] = Counter()
    for change in made:
        was = kept.get((change.player_id, change.ruleset))
        if was is not None and was.ranked:
            for level, bucket in buckets(was.rating):
                moves[change.ruleset, level, bucket] -= 1
        if change.standing.ranked:
            for level, bucket in buckets(change.standing.rating):
                moves[change.ruleset, level, bucket] += 1
    return {key: n for key, n in sorted(moves.items()) if n}
