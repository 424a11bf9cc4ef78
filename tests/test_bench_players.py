"""The players' benchmark still loads its data into the schema it measures and
times every read (a statement or a column that changed would otherwise break
only the benchmark). Counts, not timings, at a tiny size."""

from __future__ import annotations

import argparse

from bench.players.__main__ import run


async def test_the_benchmark_loads_and_times_every_read() -> None:
    results = await run(argparse.Namespace(sizes=(60, 150), samples=3))
    assert sorted(results) == [60, 150]
    names = [f.name for f in results[60]]
    assert names == [f.name for f in results[150]]
    assert {"GetProfile", "ListGames a later page", "GetLeaderboard + my rank"} <= set(names)
    assert any(n.startswith("GetReplay") for n in names)
    for figures in results.values():
        for figure in figures:
            assert len(figure.rpc) == len(figure.bare) == 3, figure.name
            assert figure.plan, figure.name
