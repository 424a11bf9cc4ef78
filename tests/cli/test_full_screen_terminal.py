"""`rummy play` itself, on a pseudo-terminal of 80×24, its screen kept by a
terminal emulator (pyte) and read back as a person sees it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import time
from pathlib import Path

import pyte

from .harness import Terminal, cli, cli_env, servers, spawn_on_pty

COLS, ROWS = 80, 24


class Screen:
    """The client on a pty, its output fed to an emulated terminal."""

    def __init__(self, *args: str) -> None:
        env = cli_env() | {"RUMMY_PLAIN": "", "TERM": "xterm-256color", "COLUMNS": str(COLS)}
        env.pop("NO_COLOR", None)
        self.pid, self.fd = spawn_on_pty(cli(*args), env, ROWS, COLS)
        os.set_blocking(self.fd, False)
        self.screen = pyte.Screen(COLS, ROWS)
        self.stream = pyte.ByteStream(self.screen)
        self.status: int | None = None

    def pump(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(self.fd, 65536):
                self.stream.feed(chunk)

    def text(self) -> str:
        return "\n".join(self.screen.display)

    async def until(self, pattern: str, timeout: float = 30.0) -> float:
        """Seconds until ``pattern`` is on screen."""
        started = time.monotonic()
        while not re.search(pattern, self.text()):
            if time.monotonic() - started > timeout:
                raise AssertionError(f"no /{pattern}/ on screen:\n{self.text()}")
            await asyncio.sleep(0.05)
            self.pump()
        return time.monotonic() - started

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    async def wait(self, timeout: float = 15.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
            await asyncio.sleep(0.05)
        raise AssertionError(f"the client did not stop:\n{self.text()}")

    def kill(self) -> None:
        if self.status is None:
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self.fd)


async def test_an_unreachable_server_is_said_in_words_within_5_s(tmp_path: Path) -> None:
    term = Screen("play", "--server", "127.0.0.1:1", "--name", "Ana", "--config-dir", str(tmp_path))
    try:
        await term.until(r"Signing in at 127\.0\.0\.1:1")  # the client is up
        waited = await term.until(r"No answer from the server at 127\.0\.0\.1:1", timeout=10)
        assert waited < 5.0, waited
        await term.until(r"Is `make run` going\?")
        await term.until(r"Trying again in \d s · q gives up")
        term.type("q")
        assert await term.wait() == 130
    finally:
        term.kill()


async def test_the_table_is_drawn_in_place_at_80_by_24(fresh_dsn: str, tmp_path: Path) -> None:
    """The bug this replaces: a prompt reprinted every second, lines wrapped at 80."""
    async with servers(fresh_dsn) as running:
        term = Screen(
            *("play", "--server", running.address, "--bots", "--name", "Ana"),
            *("--config-dir", str(tmp_path)),
        )
        try:
            await term.until(r"Your hand: 13 cards")
            await term.until(r"Your turn · \d+ s: draw a card")
            assert re.match(r" Round 1 · turn 1/120 · cafe", term.screen.display[0])
            term.type("d")
            await term.until(r"You drew \S+ from the stock")
            await term.until(r"Your hand: 14 cards")
            first = term.text()
            await asyncio.sleep(2.2)  # two countdown ticks: redrawn, never printed again
            term.pump()
            assert term.text().count("Your turn") == 1
            assert term.screen.display[1:20] == first.splitlines()[1:20]
            assert all(len(line) == COLS for line in term.screen.display)
            term.type("\x03")  # Ctrl-C steps away, keeping the seat
            assert await term.wait() == 130
        finally:
            term.kill()


async def test_a_long_typed_line_leaves_one_prompt_on_screen_in_plain_mode(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """`--plain` on a terminal of 80 columns: once the prompt and the line typed so
    far wrap, the countdown's ticks no longer redraw the prompt (each redraw used to
    print a new copy of it below the last one)."""
    async with servers(fresh_dsn, bot_delay_ms=600_000) as running:
        term = Screen(
            *("play", "--plain", "--server", running.address, "--bots", "--name", "Ana"),
            *("--config-dir", str(tmp_path)),
        )
        try:
            await term.until(r"\[Your turn ⏱ ?\d+s: draw")
            typed = "m 7S 8S 9S 10S JS QS KS / 2H 3H 4H 5H 6H"
            term.type(typed)
            await term.until("5H 6H")
            rows = term.screen.display
            at = next(i for i, line in enumerate(rows) if "[Your turn" in line)
            assert "5H 6H" in rows[at + 1], "the prompt and the line wrap"
            await asyncio.sleep(3.2)  # three ticks of the countdown
            term.pump()
            assert term.text().count("[Your turn") == 1, term.text()
            assert term.text().count("6H") == 1, term.text()
            term.type("\x03")  # Ctrl-C steps away, keeping the seat
            assert await term.wait() == 130
        finally:
            term.kill()


async def test_the_line_mode_says_an_unreachable_server_within_5_s(tmp_path: Path) -> None:
    """Before, 63 s passed before gRPC's own words were printed."""
    term = Terminal(
        "play", "--server", "127.0.0.1:1", "--name", "Ana", "--config-dir", str(tmp_path)
    )
    try:
        await term.expect(r"Signing in at 127\.0\.0\.1:1…")  # the client is up
        started = time.monotonic()
        await term.expect(r"No answer from the server at 127\.0\.0\.1:1\. Is `make run` going\?")
        assert time.monotonic() - started < 5.0
        await term.expect(r"Trying again in 5 s \(Ctrl-C gives up\)")
    finally:
        term.kill()
