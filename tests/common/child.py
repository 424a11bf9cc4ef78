"""Run a short program in a fresh Python process: process-wide settings (the
allocator's, the collector's) are tried there, never in the test runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_program(program: str, *args: str) -> str:
    """The program's standard output; it fails the test if the program fails."""
    done = subprocess.run(
        [sys.executable, "-c", program, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout
