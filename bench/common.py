"""What the benchmarks share: percentiles, CPU readings from /proc, channels,
and a fresh database that is dropped at the end."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import uuid
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import asyncpg
import grpc

from services.common.db import EmbeddedPostgres, migrate, open_pool, with_database

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


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
