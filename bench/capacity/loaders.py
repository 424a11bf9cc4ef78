"""The parent's handle on the load processes (`worker`): start them, send a
command to each and gather the answers, stop them."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
from typing import Any

from bench.common import REPO

REPLY_LIMIT = 1 << 26
"""A window's answer carries every latency it timed: lines far longer than 64 KiB."""


class Loader:
    """One load process; its stderr goes to a file shown if it fails."""

    def __init__(self, index: int, argv: list[str]) -> None:
        self.index = index
        self.argv = argv
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self.process: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "bench.capacity", "--load-worker", "--worker", str(self.index)),
            *self.argv,
            cwd=REPO,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._log,
            limit=REPLY_LIMIT,
        )

    async def ask(self, command: dict[str, Any], timeout: float) -> dict[str, Any]:
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps(command) + "\n").encode())
        await process.stdin.drain()
        line = await asyncio.wait_for(process.stdout.readline(), timeout)
        if not line:
            raise RuntimeError(f"load process {self.index} ended:\n{self.tail()}")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"load process {self.index}: {reply['error']}\n{self.tail()}")
        return reply

    def tail(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-2000:]

    async def close(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            if process.stdin is not None:
                with contextlib.suppress(OSError):
                    process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 30)
            except TimeoutError:
                process.kill()
                await process.wait()
        self._log.close()


class Loaders:
    """All load processes, sharing every count between them."""

    def __init__(self, args: argparse.Namespace, matchmaker: str, game: str) -> None:
        argv = [
            *("--matchmaker", matchmaker, "--game", game),
            *("--think-median", str(args.think_median), "--think-sigma", str(args.think_sigma)),
        ]
        self.all = [Loader(i, argv) for i in range(args.loaders)]

    @property
    def pids(self) -> dict[str, int]:
        return {f"load {i + 1}": loader.pid for i, loader in enumerate(self.all)}

    def share(self, total: int) -> list[int]:
        n = len(self.all)
        return [total // n + (1 if i < total % n else 0) for i in range(n)]

    async def start(self) -> None:
        await asyncio.gather(*(loader.start() for loader in self.all))

    async def ask(
        self, commands: list[dict[str, Any]] | dict[str, Any], timeout: float
    ) -> list[dict[str, Any]]:
        """One command to every process (or one each), answered by all."""
        each = commands if isinstance(commands, list) else [commands] * len(self.all)
        return list(
            await asyncio.gather(
                *(loader.ask(c, timeout) for loader, c in zip(self.all, each, strict=True))
            )
        )

    async def close(self) -> None:
        await asyncio.gather(*(loader.close() for loader in self.all), return_exceptions=True)
