"""How long a player thinks before each action: a lognormal distribution, the
shape human reaction and decision times take, with a median of a few seconds."""

from __future__ import annotations

import asyncio
import math
import random
from dataclasses import dataclass
from statistics import NormalDist

from clients.cli.bots import Pacer


@dataclass(frozen=True, slots=True)
class ThinkTimes:
    median_s: float
    sigma: float
    """Of the underlying normal: 0.6 puts nine actions in ten between 0.46x and 2.2x
    the median."""

    def draw(self, rng: random.Random) -> float:
        return rng.lognormvariate(math.log(self.median_s), self.sigma)

    def quantile(self, q: float) -> float:
        return math.exp(math.log(self.median_s) + self.sigma * NormalDist().inv_cdf(q))

    @property
    def mean_s(self) -> float:
        return self.median_s * math.exp(self.sigma**2 / 2)

    def describe(self) -> str:
        return (
            f"think time before each action: lognormal, median {self.median_s:g} s,"
            f" sigma {self.sigma:g} (p10 {self.quantile(0.10):.2f} s,"
            f" p90 {self.quantile(0.90):.2f} s, p99 {self.quantile(0.99):.2f} s,"
            f" mean {self.mean_s:.2f} s)"
        )


class Thinking(Pacer):
    """The bots' pacer (`clients.cli.bots`), waiting a think time before each action."""

    def __init__(self, times: ThinkTimes, rng: random.Random) -> None:
        super().__init__(0)
        self._times = times
        self._rng = rng

    async def wait(self) -> None:
        await asyncio.sleep(self._times.draw(self._rng))
