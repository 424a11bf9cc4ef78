"""The benchmarks' ceilings still run against the schema, statements and messages
they measure (a change would otherwise break only the bench). Counts, not
timings: each mode commits transactions in a short window."""

from __future__ import annotations

import argparse

import pytest

from bench.game.ceilings import NOTIFY_MODES, act_ceiling, ceiling_run
from bench.matchmaker.ceilings import stream_ceiling
from bench.matchmaker.servers import Child
from services.common.db import migrate, open_pool


@pytest.mark.parametrize("mode", list(NOTIFY_MODES))
async def test_each_ceiling_mode_commits_transactions(fresh_dsn: str, mode: str) -> None:
    pool = await open_pool(fresh_dsn, max_size=2)
    try:
        await migrate(pool)
    finally:
        await pool.close()
    timings, _ = await ceiling_run(fresh_dsn, mode, connections=2, warmup=0.1, seconds=0.3)
    assert timings.latencies, f"{mode}: no transaction committed"


async def test_the_bare_enqueue_server_sends_what_the_matchmaker_sends() -> None:
    # Its streams are the floor bench.matchmaker compares the matchmaker with:
    # each must end with a match, as the matchmaker's do.
    async with Child("bare", "") as bare:
        floor = await stream_ceiling(bare.port, bare.pid, 20, channels=2)
    assert floor.rate > 0 and floor.server_ms > 0 and floor.clients_ms > 0


async def test_the_bare_action_ceiling_measures_answered_calls() -> None:
    # bench.game's floor for an action: each Act call is answered, and the bare
    # server spent CPU on it (the run measured what it claims to).
    args = argparse.Namespace(tables=3, watchers=2, seconds=0.5)
    timings, usage = await act_ceiling(args)
    assert timings.latencies, "no Act call answered in the window"
    assert usage.used["bare server"] > 0
