"""The terminal: a prompt that keeps working while the table moves.

Lines are read by `input()` on a helper thread (so readline gives history and
tab completion) and handed to the event loop one at a time. Messages that
arrive while the player is typing are printed above the prompt, and the
prompt itself (with its turn countdown) is redrawn in place, keeping what the
player has typed so far, as long as the two fit on one row: once they wrap, the
prompt is left as it is (a carriage return reaches back one row only).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import sys
import threading
import unicodedata
from collections.abc import Callable
from typing import Any

try:  # Not on every platform; the client works without it.
    import readline
except ImportError:  # pragma: no cover
    readline = None  # type: ignore[assignment]

try:
    import termios
except ImportError:  # pragma: no cover
    termios = None  # type: ignore[assignment]

_ANSI = re.compile(r"(\x1b\[[0-9;]*m)")
CLEAR_LINE = "\r\x1b[K"


def cells(text: str) -> int:
    """Columns ``text`` takes on a terminal: colour codes take none, wide characters
    (East Asian wide and full-width) two, combining marks none."""
    plain = _ANSI.sub("", text)
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in plain
    )


def _for_readline(prompt: str) -> str:
    """Mark colour codes as zero-width, or readline miscounts the prompt's length."""
    return _ANSI.sub("\x01\\1\x02", prompt) if readline is not None else prompt


class Terminal:
    """Reads lines without blocking the event loop; prints around the prompt."""

    def __init__(
        self,
        on_line: Callable[[str | None], None],
        *,
        completions: Callable[[], list[str]] = list,
    ) -> None:
        self.interactive = sys.stdin.isatty() and sys.stdout.isatty()
        self._on_line = on_line
        self._completions = completions
        self._prompt = "> "
        self._reading = False
        self._want = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._saved: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        if self.interactive and termios is not None:
            with contextlib.suppress(termios.error):
                self._saved = termios.tcgetattr(sys.stdin.fileno())
        if self.interactive and readline is not None:
            readline.set_completer(self._complete)
            readline.set_completer_delims(" /,")
            doc = readline.__doc__ or ""
            readline.parse_and_bind("bind ^I rl_complete" if "libedit" in doc else "tab: complete")

    # --- reading ------------------------------------------------------------------

    def request_line(self) -> None:
        """Ask for the next line; it comes back through `on_line` (None at end of input)."""
        if self._thread is None:
            self._loop = asyncio.get_running_loop()
            self._thread = threading.Thread(target=self._read, name="terminal", daemon=True)
            self._thread.start()
        self._want.set()

    def _read(self) -> None:
        assert self._loop is not None
        while True:
            self._want.wait()
            self._want.clear()
            with self._lock:
                self._reading = True
                prompt = self._prompt
            try:
                line: str | None = input(_for_readline(prompt))
            except (EOFError, OSError, ValueError):
                line = None
            with self._lock:
                self._reading = False
            try:
                self._loop.call_soon_threadsafe(self._on_line, line)
            except RuntimeError:  # the loop is gone: the client is exiting
                return
            if line is None:
                return

    def _complete(self, text: str, state: int) -> str | None:
        word = text.upper()
        codes = self._completions()
        # Tens are shown as 10♠ but coded TS: complete both ways of typing them.
        names = {*codes, *("10" + c[1] for c in codes if c[0] == "T")}
        options = sorted(n for n in names if n.startswith(word))
        return options[state] if state < len(options) else None

    # --- writing ------------------------------------------------------------------

    def _one_row(self, prompt: str, typed: str) -> bool:
        """Whether the prompt and the line typed so far fit on one row of the terminal."""
        return cells(prompt) + cells(typed) < shutil.get_terminal_size().columns

    def say(self, text: str) -> None:
        """Print a message; while the player types, above their line, which is kept."""
        with self._lock:
            if self._reading and self.interactive:
                typed = readline.get_line_buffer() if readline is not None else ""
                # A line that wrapped cannot be cleared from its last row: it stays
                # above the message, which the prompt and the line follow again.
                clear = CLEAR_LINE if self._one_row(self._prompt, typed) else "\n"
                sys.stdout.write(f"{clear}{text}\n{self._prompt}{typed}")
            else:
                sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def set_prompt(self, prompt: str) -> None:
        """Change the prompt; on a terminal the one being shown is redrawn in place,
        unless it and the line typed so far fill a row (then it waits for the next
        line: redrawn, it would be printed again below itself)."""
        with self._lock:
            shown, self._prompt = self._prompt, prompt
            if prompt != shown and self._reading and self.interactive:
                typed = readline.get_line_buffer() if readline is not None else ""
                if self._one_row(shown, typed) and self._one_row(prompt, typed):
                    sys.stdout.write(f"{CLEAR_LINE}{prompt}{typed}")
                    sys.stdout.flush()

    def restore(self) -> None:
        """Give the terminal back as it was (readline may be mid-line on its thread)."""
        if self._saved is not None and termios is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, self._saved)
        if self._reading and self.interactive:
            sys.stdout.write("\n")
            sys.stdout.flush()
