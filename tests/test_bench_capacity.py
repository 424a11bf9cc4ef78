"""`python -m bench.capacity --quick` still runs end to end and prints every
figure the capacity report is made of. Lines, not timings: what the numbers
say depends on the machine."""

from __future__ import annotations

import pytest

from bench.capacity.options import options
from bench.capacity.runner import run

FIGURES = (
    "think time before each action: lognormal",
    "Idle: no player connected",
    "Step 1: 8 players",
    "most concurrent players one game-server process held:",
    "game server CPU per player-minute at",
    "game server CPU per action at that step:",
    "per call of a bare grpc.aio echo",
    "Bare grpc.aio server at the players' pace:",
    "gRPC alone at that pace:",
    "memory per connected player:",
    "PostgreSQL CPU above idle:",
    "load processes (apart from the server):",
    "where the game server's CPU goes",
    "threads (cores):",
)


async def test_quick_run_prints_every_figure(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    await run(options(["--quick"]))
    printed = capsys.readouterr().out
    missing = [figure for figure in FIGURES if figure not in printed]
    assert not missing, f"not printed: {missing}\n{printed}"
