"""The benchmark's asyncpg ceilings still run against the schema and statements
they measure (a statement that changed would otherwise break only the bench).
Counts, not timings: each mode commits transactions in a short window."""

from __future__ import annotations

import pytest

from bench.game.ceilings import NOTIFY_MODES, ceiling_run
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
