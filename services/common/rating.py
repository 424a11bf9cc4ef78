"""Player ratings: the Plackett-Luce model (openskill), for tables of 2 to 6.

A rating is a mean ``mu``, the skill the player is believed to have, and a
deviation ``sigma``, how unsure that belief still is: large for a newcomer, it
shrinks as games are played (a game never makes it grow: ``limit_sigma``) towards
`SETTLED_DEVIATION`, where the model's small drift ``tau`` keeps it so that a
rating can still follow a player who improves. A game's places update every
player at once, by who finished ahead of whom, whatever the table's size.

The scale is Elo's, so that the numbers players saw before stay meaningful: a
newcomer has `DEFAULT_RATING` (1500), and ``beta`` is set so that the model's
updates take a 400-point gap between two settled players for 10 to 1 odds, as
Elo did (a win moves a rating in proportion to its surprise, as before). The
other parameters keep openskill's proportions (``sigma = 2 beta``,
``tau = sigma / 100``).
The displayed rating is ``mu`` itself (the ``rating`` column); its deviation is
stored beside it (``rating_deviation``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from openskill.models import PlackettLuce

DEFAULT_RATING = 1500.0
BETA = 400.0 / (math.log(10.0) * math.sqrt(2.0))
"""The performance spread of one game. The updates take a player's chance to beat
another for ``1 / (1 + exp(-gap / c))``, ``c^2 = sigma_a^2 + sigma_b^2 + 2 beta^2``:
with deviations small next to beta, Elo's ``1 / (1 + 10 ** (-gap / 400))``."""
DEFAULT_DEVIATION = 2.0 * BETA
"""A newcomer's deviation (about 246 points)."""
TAU = DEFAULT_DEVIATION / 100.0

SETTLED_DEVIATION = 43.15
"""Where the deviation settles after many games (between equals, in duels): a
game's information just makes up for ``tau`` there."""
DEVIATION_HALF_GAMES = 27.0
"""In `carried_over_deviation`: games after which the deviation's excess over
`SETTLED_DEVIATION` (``sqrt(sigma^2 - settled^2)``) has halved."""
ELO_K = 32.0
"""The largest step the former Elo ratings took in one game."""

_MODEL = PlackettLuce(
    mu=DEFAULT_RATING, sigma=DEFAULT_DEVIATION, beta=BETA, tau=TAU, limit_sigma=True
)


class Rating(NamedTuple):
    mu: float
    sigma: float


def updated(ratings: Sequence[Sequence[float]], places: Sequence[int]) -> list[Rating]:
    """New ratings after one game: ``ratings`` are ``(mu, sigma)`` pairs, ``places``
    are 0 for the winner, higher is worse, equal for a tie."""
    if len(ratings) < 2:
        return [Rating(mu, sigma) for mu, sigma in ratings]
    teams = [[_MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]
    rated = _MODEL.rate(teams, ranks=[float(p) for p in places])
    return [Rating(team[0].mu, team[0].sigma) for team in rated]


def carried_over_deviation(games: int) -> float:
    """The deviation given to a former Elo rating backed by ``games`` games: close
    (within a few percent) to the model's own after that many duels between
    equals, from `DEFAULT_DEVIATION` down to `SETTLED_DEVIATION`. The migration
    ``0013_openskill.sql`` computes the same in SQL."""
    excess = DEFAULT_DEVIATION**2 - SETTLED_DEVIATION**2
    shrink = DEVIATION_HALF_GAMES / (DEVIATION_HALF_GAMES + games)
    return math.sqrt(SETTLED_DEVIATION**2 + excess * shrink**2)


def games_behind(elo: float, games_on_record: int) -> int:
    """How many games a former Elo rating counts as: those still on record, or,
    when fewer (older tables are purged), as many as its distance from
    `DEFAULT_RATING` needs at the largest Elo step (the migration does the same)."""
    return max(games_on_record, math.ceil(abs(elo - DEFAULT_RATING) / ELO_K))
