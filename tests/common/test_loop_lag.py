"""A replica's event-loop lag: a stalled loop shows in `rummy_event_loop_lag_seconds`,
and both servers measure their loop from start to stop."""

from __future__ import annotations

import asyncio
import time

from prometheus_client import REGISTRY

from services.common.looplag import LoopLag
from services.game.server import GameServer
from services.matchmaker.server import MatchmakerServer
from tests.matchmaker.harness import backend

STALL_S = 0.2


def _later_than(bound: str) -> float:
    """Observations above the bucket bound ``bound`` so far, in this process."""
    count = REGISTRY.get_sample_value("rummy_event_loop_lag_seconds_count") or 0.0
    within = REGISTRY.get_sample_value("rummy_event_loop_lag_seconds_bucket", {"le": bound})
    return count - (within or 0.0)


async def test_a_stalled_loop_is_observed_as_lag() -> None:
    lag = LoopLag(tick_s=0.01)
    lag.start()
    lag.start()  # once is enough: a second start leaves one task, not two
    try:
        await asyncio.sleep(0.05)
        count_before = REGISTRY.get_sample_value("rummy_event_loop_lag_seconds_count") or 0.0
        late_before = _later_than("0.1")
        time.sleep(STALL_S)  # a synchronous step holding the loop, as a CPU-bound one would
        await asyncio.sleep(0.05)
        assert _later_than("0.1") - late_before >= 1
        assert (REGISTRY.get_sample_value("rummy_event_loop_lag_seconds_count") or 0.0) > (
            count_before
        )
    finally:
        await lag.stop()
    assert not lag.running
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "loop-lag"]


async def test_both_servers_measure_their_loop_while_they_run(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        servers: list[GameServer | MatchmakerServer] = [b.game, *b.matchmakers]
        assert all(s.loop_lag.running for s in servers)
        await b.matchmakers[0].stop(0)
        assert not b.matchmakers[0].loop_lag.running
        assert b.game.loop_lag.running
    assert not b.game.loop_lag.running
