"""The full-screen table, played with keys against real servers and bots, read
back from the screen at 80×24 and 120×40."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clients.cli.matchmaking import QueueChoice
from services.common.pb.rummy.v1 import table_pb2

from .harness import servers
from .screen import (
    LARGE,
    SMALL,
    full_screen,
    my_turn,
    notice_shown,
    play_a_turn,
    play_to_the_end,
    press,
    screen_lines,
    screen_text,
    status_lines,
    table_screen,
    until,
    until_screen,
)

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


def log_rows(lines: list[str]) -> list[str]:
    """The rows inside the log's box ("What happened"), as drawn."""
    top = next((i for i, line in enumerate(lines) if "╭─ What happened" in line), -1)
    if top < 0:
        return []  # a question or a result covers it
    bottom = next(i for i in range(top + 1, len(lines)) if lines[i].startswith("╰"))
    return [line[1:-1].strip() for line in lines[top + 1 : bottom]]


async def test_a_whole_game_at_120_by_40(fresh_dsn: str, tmp_path: Path) -> None:
    """The larger terminal: the same table, every line 120 columns wide, and the log
    growing with the screen to show the game's story far further back than at 80×24
    (four lines there)."""
    choice = QueueChoice(2, "cafe", True, SHORT["cafe"])
    async with (
        servers(fresh_dsn) as running,
        full_screen(running.address, tmp_path, choice, size=LARGE) as pilot,
    ):
        await until_screen(pilot, r"Your hand: \d+ cards")
        lines = screen_lines(pilot)
        assert len(lines) == 40 and all(len(line) == 120 for line in lines)
        screen = table_screen(pilot)
        assert screen is not None and screen.has_class("-tall")
        assert re.search(r"Round 1 · turn \d+/\d+ · cafe", lines[0])
        assert len(log_rows(lines)) >= 12
        assert re.search(r"▶? +Ana \(you\) +\d+c", "\n".join(lines))
        assert re.search(r"Bot 1 \(bot\) +\d+c", "\n".join(lines))
        # A few turns in, the log shows more of the story than 80×24 can.
        log = screen.session.log
        while len(log) < 6:
            assert notice_shown(pilot) is None, screen_text(pilot)
            if my_turn(pilot) and "d draw" in status_lines(pilot)[1]:
                await play_a_turn(pilot)
            await pilot.pause(0.05)
        await until(pilot, lambda: len([r for r in log_rows(screen_lines(pilot)) if r]) >= 6, "6")
        final = await play_to_the_end(pilot)
        assert re.search(r"Game over: .* wins? \(", final), final
        assert "Final totals" in final and all(len(line) == 120 for line in final.splitlines())
        await press(pilot, "q")
