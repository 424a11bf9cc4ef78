"""What the benchmarks share: percentiles, CPU readings from /proc, channels,
servers in processes of their own, and a fresh database dropped at the end."""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Self

import asyncpg
import grpc

from services.common.db import EmbeddedPostgres, migrate, open_pool, with_database

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
REPO = Path(__file__).resolve().parent.parent


def pct(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile ``q`` (0-100) of ``values``; NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[k]


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def machine_load() -> str:
    """The load average: other programs running on the machine skew every number."""
    one, five, _ = os.getloadavg()
    return f"machine load average {one:.1f} (1 min), {five:.1f} (5 min)"


def cpu_seconds(pid: int | str) -> float:
    """User + system CPU time of one process (0 when it is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = text.rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def machine_busy() -> float:
    """CPU seconds all processes of the machine have used since boot."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    ticks = [int(f) for f in fields[:8]]
    return (sum(ticks) - ticks[3] - ticks[4]) / _TICKS  # all but idle and iowait


def channel(port: int, index: int = 0) -> grpc.aio.Channel:
    """A channel with its own connection (channels with equal options share one)."""
    return grpc.aio.insecure_channel(
        f"127.0.0.1:{port}",
        options=[("grpc.use_local_subchannel_pool", 1), ("bench.channel", index)],
    )


async def admin(dsn: str, statement: str) -> None:
    con = await asyncpg.connect(dsn)
    try:
        await con.execute(statement)
    finally:
        await con.close()


async def server_facts(dsn: str) -> str:
    con = await asyncpg.connect(dsn)
    try:
        version = await con.fetchval("SHOW server_version")
        fsync = await con.fetchval("SHOW fsync")
        sync = await con.fetchval("SHOW synchronous_commit")
    finally:
        await con.close()
    return f"PostgreSQL {version} (fsync {fsync}, synchronous_commit {sync})"


@contextlib.asynccontextmanager
async def fresh_database(prefix: str) -> AsyncIterator[tuple[str, str]]:
    """(DSN of a fresh, migrated database, where its server came from).

    The server is DATABASE_URL's when set, else an embedded one started for
    the run; the database is dropped at the end either way."""
    url = os.environ.get("DATABASE_URL", "").strip()
    embedded: EmbeddedPostgres | None = None
    source = "DATABASE_URL"
    if not url:
        embedded = EmbeddedPostgres.temporary()
        url = await asyncio.to_thread(embedded.start)
        source = "embedded (temporary)"
    try:
        name = f"{prefix}_{uuid.uuid4().hex[:16]}"
        await admin(url, f'CREATE DATABASE "{name}"')
        try:
            dsn = with_database(url, name)
            pool = await open_pool(dsn, max_size=2)
            try:
                await migrate(pool)
            finally:
                await pool.close()
            yield dsn, source
        finally:
            await admin(url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


class Child:
    """One server of a benchmark in its own process, `python -m MODULE --serve
    ROLE --dsn DSN --port-fd FD EXTRA...`: it writes the ports it listens on
    (its gRPC port first) to that pipe once it serves, and runs until its stdin
    closes. Stopped on exit: stdin closed, then killed if it lingers."""

    def __init__(
        self, module: str, role: str, dsn: str, *extra: str, env: dict[str, str] | None = None
    ) -> None:
        self.module = module
        self.role = role
        self.dsn = dsn
        self.extra = extra
        self.env = env or {}
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop())
        self.process: subprocess.Popen[bytes] | None = None
        self.ports: list[int] = []

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def port(self) -> int:
        return self.ports[0]

    async def __aenter__(self) -> Self:
        read_end, write_end = os.pipe()
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    *("-m", self.module, "--serve", self.role),
                    *("--dsn", self.dsn, "--port-fd", str(write_end), *self.extra),
                ],
                cwd=REPO,
                stdin=subprocess.PIPE,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                pass_fds=(write_end,),
                env={**os.environ, **self.env},
            )
        finally:
            os.close(write_end)
        try:
            text = await asyncio.wait_for(asyncio.to_thread(os.read, read_end, 64), 60)
            if not text.strip():
                raise RuntimeError(f"the {self.role} server did not start:\n{self.tail()}")
            self.ports = [int(word) for word in text.split()]
        except BaseException:
            await self.stop()
            raise
        finally:
            os.close(read_end)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.stop()

    def command(self, line: str) -> None:
        """A line on the server's stdin (what it does with it is the benchmark's)."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(f"{line}\n".encode())
        self.process.stdin.flush()

    def tail(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-3000:]

    def complaints(self) -> Counter[str]:
        """Warnings and errors the server logged (JSON lines), by event and code."""
        self._log.seek(0)
        found: Counter[str] = Counter()
        for line in self._log.read().decode(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                if line.startswith(("Traceback", "ERROR")) or "Error:" in line:
                    found[line.strip()[:120]] += 1
                continue
            if isinstance(entry, dict) and entry.get("level") in ("warning", "error", "critical"):
                code = f" code={entry['code']}" if "code" in entry else ""
                found[f"{entry.get('event', '?')}{code}"] += 1
        return found

    async def stop(self) -> None:
        """Stop the server; its log is closed too (read `tail`/`complaints` before)."""
        process, self.process = self.process, None
        if process is None:
            self._log.close()
            return
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            await asyncio.to_thread(process.wait, 20)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.to_thread(process.wait)
        self._log.close()
