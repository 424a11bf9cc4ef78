"""What the game server's /metrics says over a window: its event-loop lag and
its own time to answer the players' actions, as histograms read twice."""

from __future__ import annotations

import math
import urllib.request
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

LAG = "rummy_event_loop_lag_seconds_bucket"
RPC = "rummy_rpc_duration_seconds_bucket"
WATCHES = "rummy_watch_streams"
ACTIONS = frozenset({"DrawStock", "TakeDiscard", "Meld", "LayOff", "SwapJoker", "Discard"})
"""The players' moves, timed by the server (GetTable and the streams aside)."""


@dataclass(frozen=True)
class Scrape:
    lag: dict[float, float]
    actions: dict[float, float]
    watch_streams: float

    def since(self, before: Scrape) -> Scrape:
        def minus(a: dict[float, float], b: dict[float, float]) -> dict[float, float]:
            return {bound: n - b.get(bound, 0.0) for bound, n in a.items()}

        return Scrape(
            minus(self.lag, before.lag), minus(self.actions, before.actions), self.watch_streams
        )


def scrape(port: int) -> Scrape:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    lag: dict[float, float] = {}
    actions: dict[float, float] = {}
    watching = 0.0
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == LAG:
                lag[float(sample.labels["le"])] = sample.value
            elif sample.name == RPC and sample.labels.get("method") in ACTIONS:
                bound = float(sample.labels["le"])
                actions[bound] = actions.get(bound, 0.0) + sample.value
            elif sample.name == WATCHES:
                watching = sample.value
    return Scrape(lag, actions, watching)


def quantile(buckets: dict[float, float], q: float) -> float:
    """The ``q`` quantile (0-1) of a cumulative histogram, interpolated linearly in
    its bucket as Prometheus' histogram_quantile does; NaN when empty, inf past the
    last finite bound."""
    total = buckets.get(math.inf, 0.0)
    if total <= 0:
        return math.nan
    rank = q * total
    low, below = 0.0, 0.0
    for bound in sorted(buckets):
        count = buckets[bound]
        if count >= rank:
            if bound == math.inf:
                return math.inf
            return low + (bound - low) * (rank - below) / max(count - below, 1e-12)
        low, below = bound, count
    return math.inf
