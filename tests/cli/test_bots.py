"""`rummy bots`: bot players that queue and play real games through the API."""

from __future__ import annotations

import json
import re

import pytest

from .harness import run_cli, servers


@pytest.mark.parametrize(("size", "bots", "games"), [(2, 4, 2), (3, 3, 1), (4, 4, 1)])
async def test_bots_finish_games_at_every_table_size(
    fresh_dsn: str, size: int, bots: int, games: int
) -> None:
    async with servers(fresh_dsn) as running:
        code, out = await run_cli(
            *f"bots {bots} --players {size} --games {games}".split(), "--server", running.address
        )
    assert code == 0, out
    assert re.search(rf"games finished\s+{games}\b", out), out
    assert re.search(r"errors\s+0\b", out), out
    assert re.search(r"action latency\s+p50", out), out


async def test_the_load_generator_keeps_tables_going_for_a_duration(fresh_dsn: str) -> None:
    async with servers(fresh_dsn) as running:
        code, out = await run_cli(
            *("bots", "2", "--players", "2", "--tables", "3", "--rate", "200"),
            *("--duration", "4", "--json", "--server", running.address),
        )
    assert code == 0, out
    assert out.startswith("6 bots queueing for 2-player cafe tables"), out
    assert re.search(r"tables in play\s+\d+\s+games\s+\d+\s+actions\s+\d+ \(\s*[\d.]+/s\)", out)
    numbers = json.loads(out.strip().splitlines()[-1])
    assert numbers["actions"] > 20 and numbers["actions_per_s"] > 0, out
    assert numbers["errors"] == 0 and numbers["latency_ms"]["p50"] > 0, out


async def test_an_unexpected_error_makes_the_run_fail(fresh_dsn: str) -> None:
    async with servers(fresh_dsn) as running:
        code, out = await run_cli(
            *("bots", "2", "--rules", "nope", "--games", "1", "--server", running.address)
        )
    assert code == 1, out
    assert re.search(r"errors\s+2\b", out), out
    assert "There is no rule set called 'nope'. [RULESET_UNKNOWN]" in out
