"""The load: `rummy bots` generators in their own processes, and what their
progress lines and final JSON report say."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from bench.soak.settings import REPO

PROGRESS = re.compile(r"games\s+(\d+)\s+actions\s+(\d+).*errors\s+(\d+)")


@dataclass
class Load:
    """One `rummy bots` load generator and what its progress lines say."""

    process: subprocess.Popen[bytes]
    games: int = 0
    actions: int = 0
    errors: int = 0
    final: dict[str, Any] = field(default_factory=dict)

    async def follow(self) -> None:
        assert self.process.stdout is not None
        stdout = self.process.stdout
        while line := await asyncio.to_thread(stdout.readline):
            text = line.decode(errors="replace").strip()
            if text.startswith("{"):
                with contextlib.suppress(ValueError):
                    self.final = json.loads(text)
                    self.games = self.final.get("games", self.games)
                    self.errors = self.final.get("errors", self.errors)
                    self.actions = self.final.get("actions", self.actions)
            elif m := PROGRESS.search(text):
                self.games, self.actions, self.errors = map(int, m.groups())


def start_load(matchmaker: int, tables: int, rate: float, seconds: float) -> Load:
    code = "import sys; from clients.cli.main import main; sys.exit(main())"
    argv = [
        sys.executable,
        "-c",
        code,
        "bots",
        "0",
        "--server",
        f"127.0.0.1:{matchmaker}",
        "--tables",
        str(tables),
        "--rate",
        str(rate),
        "--duration",
        str(seconds),
        "--json",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        argv,
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    return Load(process)
