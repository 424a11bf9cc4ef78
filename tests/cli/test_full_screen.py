"""The full-screen table, played with keys against real servers and bots, read
back from the screen at 80×24 and 120×40."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clients.cli.matchmaking import QueueChoice
from services.common.pb.rummy.v1 import table_pb2

from .harness import servers
from .screen import SMALL, full_screen, play_to_the_end, press, screen_lines, until_screen

SHORT = {
    "cafe": table_pb2.TableOptions(rounds=1, turn_cap=24),
    "rami51": table_pb2.TableOptions(rounds=1, turn_cap=24),
    "classic": table_pb2.TableOptions(turn_cap=24),
    # Seven deals: each cut short by the turn cap, claims settled in half a second.
    "contract": table_pb2.TableOptions(turn_cap=6, claim_window_ms=500),
}
"""Games short enough for a test, each still played to its end."""


@pytest.mark.parametrize("ruleset", ["cafe", "rami51", "classic", "contract"])
async def test_a_whole_game_with_keys_only(fresh_dsn: str, tmp_path: Path, ruleset: str) -> None:
    choice = QueueChoice(2, ruleset, True, SHORT[ruleset])
    async with (
        servers(fresh_dsn) as running,
        full_screen(running.address, tmp_path, choice, size=SMALL) as pilot,
    ):
        await until_screen(pilot, r"Your hand: \d+ cards")
        lines = screen_lines(pilot)
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        assert re.search(rf"Round 1 · turn \d+/\d+ · {ruleset}", lines[0])
        assert "Ana (you)" in "\n".join(lines) and "Bot 1 (bot)" in "\n".join(lines)
        final = await play_to_the_end(pilot)
        assert re.search(r"Game over: .* wins? \(", final), final
        assert "Final totals" in final
        await press(pilot, "q")
