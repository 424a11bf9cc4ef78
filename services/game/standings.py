"""A player's standing in a rule set (`player_standings`), and what a finished
game changes in it and in the leaderboards' rating buckets (`rating_buckets`).

Plain values in, plain values out: `results` reads the kept standings and the
new ratings in the game's commit, and writes what this module works out.

The buckets count a rule set's ranked players (a rated game there) by the whole
part of their rating, so that a player's rank is the players of the buckets
above theirs (a sum over a few hundred rows at most) plus those ahead of them in
their own bucket (an index range of a few): its cost does not grow with the
number of players, where counting every entry ahead would.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

START_RATING = 1500.0
"""A rule set's standing before any rated game: the ratings' own start."""


def bucket(rating: float) -> int:
    """The rating bucket a rating counts in (as SQL's floor() puts it)."""
    return math.floor(rating)


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
    """A person's part in the finished game, and their rating after it."""

    player_id: str
    won: bool
    rating: float | None
    """The ratings' value after the game (None: a player the ratings do not know)."""
    deviation: float | None = None


@dataclass(frozen=True, slots=True)
class Change:
    player_id: str
    ruleset: str
    standing: Standing
    played: bool
    """The game was in this rule set (else only the rating moved)."""


def changes(
    kept: Mapping[tuple[str, str], Standing],
    ruleset: str,
    people: Sequence[Seated],
    *,
    rated: bool,
) -> list[Change]:
    """The standings the game changes: each person's in its rule set; and, for a
    rated game, their rating in every other rule set they have a standing in (one
    rating serves them all, `services.common.rating`)."""
    out: list[Change] = []
    for person in people:
        was = kept.get((person.player_id, ruleset), Standing())
        won = person.won
        streak = max(was.streak, 0) + 1 if won else min(was.streak, 0) - 1
        now = replace(
            was,
            games=was.games + 1,
            wins=was.wins + won,
            streak=streak,
            rated_games=was.rated_games + rated,
        )
        if person.rating is not None:
            now = replace(now, rating=person.rating, deviation=person.deviation)
        out.append(Change(person.player_id, ruleset, now, played=True))
        if not rated or person.rating is None:
            continue
        for (player, other), standing in sorted(kept.items()):
            if player == person.player_id and other != ruleset:
                moved = replace(standing, rating=person.rating, deviation=person.deviation)
                out.append(Change(player, other, moved, played=False))
    return out


def bucket_moves(
    kept: Mapping[tuple[str, str], Standing], made: Sequence[Change]
) -> dict[tuple[str, int], int]:
    """What ``made`` adds to each (rule set, bucket)'s count of ranked players;
    buckets left as they were are left out."""
    moves: Counter[tuple[str, int]] = Counter()
    for change in made:
        was = kept.get((change.player_id, change.ruleset))
        if was is not None and was.ranked:
            moves[change.ruleset, bucket(was.rating)] -= 1
        if change.standing.ranked:
            moves[change.ruleset, bucket(change.standing.rating)] += 1
    return {key: n for key, n in sorted(moves.items()) if n}
