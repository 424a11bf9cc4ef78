"""Player ratings: Elo, extended to tables of 2-6 as pairwise duels.

Each pair of players at a finished table is one duel won by the better
placed player (a draw for equal places). The K factor is split across the
opponents so a 4-player game moves a rating about as much as a 2-player one.
"""

from __future__ import annotations

from collections.abc import Sequence

K_FACTOR = 32.0
DEFAULT_RATING = 1500.0


def expected(a: float, b: float) -> float:
    """Chance that a player rated ``a`` beats one rated ``b``."""
    return 1.0 / (1.0 + float(10.0 ** ((b - a) / 400.0)))


def updated(ratings: Sequence[float], places: Sequence[int], k: float = K_FACTOR) -> list[float]:
    """New ratings; ``places`` are 0 for the winner, higher is worse, equal ties."""
    n = len(ratings)
    if n < 2:
        return list(ratings)
    step = k / (n - 1)
    out = []
    for i in range(n):
        delta = 0.0
        for j in range(n):
            if i == j:
                continue
            score = 1.0 if places[i] < places[j] else 0.5 if places[i] == places[j] else 0.0
            delta += step * (score - expected(ratings[i], ratings[j]))
        out.append(ratings[i] + delta)
    return out
