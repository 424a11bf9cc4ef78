"""Leaving a table at the terminal: the question waits at the prompt for its answer."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .harness import MY_DRAW, SEATED, rejoining, seat_with_a_bot, servers

QUESTION = r"Leave this table for good\? You lose the game\. \[y/N\] > "


async def test_the_leave_question_is_the_prompt_until_it_is_answered(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the question was printed and answered at the turn's own prompt."""
    async with servers(fresh_dsn, bot_delay_ms=600_000) as running:
        await seat_with_a_bot(running, tmp_path)
        term = rejoining(running, tmp_path)
        try:
            await term.expect(SEATED)
            await term.expect(MY_DRAW)
            await term.send("q")
            await term.expect(QUESTION)
            asked = len(term.log.getvalue())
            await asyncio.sleep(1.5)  # the countdown ticks on: the question stays
            await term.send("n")
            await term.expect("Staying at the table.")
            waited = term.log.getvalue()[asked:]
            assert "Your turn" not in waited.split("Staying")[0], term.transcript()
            await term.expect(MY_DRAW)
            await term.leave()
        finally:
            term.kill()
