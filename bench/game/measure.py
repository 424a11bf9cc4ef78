"""Measuring a phase: the window it counts, latencies and rates, CPU and
memory read from /proc, and the game server's event-loop lag."""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from bench.common import cpu_seconds, machine_busy, pct


def ms(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds * 1000:.1f} ms"


@dataclass
class Window:
    """The measured interval; work finishing outside it (warm-up, tail) is not counted."""

    start: float
    end: float

    @classmethod
    def after(cls, warmup: float, seconds: float) -> Window:
        start = time.perf_counter() + warmup
        return cls(start, start + seconds)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def holds(self, t: float) -> bool:
        return self.start <= t < self.end


@dataclass
class Timings:
    window: Window
    latencies: list[float] = field(default_factory=list)

    def add(self, started: float, finished: float) -> None:
        if self.window.holds(finished):
            self.latencies.append(finished - started)

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.window.seconds

    def summary(self) -> str:
        lat = self.latencies
        return f"p50 {ms(pct(lat, 50))}  p99 {ms(pct(lat, 99))}"


# --- processes: CPU and memory from /proc -----------------------------------


def postgres_cpu(database: str) -> dict[str, float]:
    """CPU seconds of the PostgreSQL processes that serve ``database``: its
    backends and their cluster's own processes (WAL writer, checkpointer...),
    not the backends of other databases on the same server."""
    procs: dict[str, tuple[str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if (entry / "comm").read_text().strip() != "postgres":
                continue
            ppid = (entry / "stat").read_text().rpartition(")")[2].split()[1]
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            procs[entry.name] = (ppid, cmd)
    ours = {pid for pid, (_, cmd) in procs.items() if f" {database} " in cmd}
    clusters = {procs[pid][0] for pid in ours}

    def counted(pid: str, ppid: str, cmd: str) -> bool:
        backend = "(" in cmd or "[local]" in cmd
        return pid in ours or pid in clusters or (ppid in clusters and not backend)

    return {pid: cpu_seconds(pid) for pid, (ppid, cmd) in procs.items() if counted(pid, ppid, cmd)}


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class Usage:
    """CPU seconds used over ``wall`` seconds, by process (or group)."""

    wall: float
    used: dict[str, float]
    others: float
    """By everything else on the machine: a busy machine skews every number."""

    def describe(self, ops: int = 0, unit: str = "op") -> str:
        parts = []
        for name, seconds in self.used.items():
            part = f"{name} {seconds / self.wall:.2f}"
            if ops:
                part += f" ({seconds / ops * 1000:.2f} ms/{unit})"
            parts.append(part)
        parts.append(f"other processes {self.others / self.wall:.2f}")
        return f"CPU cores used (of {os.cpu_count()}): " + ", ".join(parts)


class CpuMeter:
    """CPU used over a window by the given processes, this one and PostgreSQL."""

    def __init__(self, database: str, processes: dict[str, int], me: str = "bench clients") -> None:
        self._database = database
        self._processes = processes
        self._me = me
        self._start = self._sample()

    def _sample(self) -> tuple[float, float, dict[str, float], dict[str, float]]:
        mine = {name: cpu_seconds(pid) for name, pid in self._processes.items()}
        mine[self._me] = cpu_seconds("self")
        pg = postgres_cpu(self._database) if self._database else {}
        return time.perf_counter(), machine_busy(), mine, pg

    def stop(self) -> Usage:
        (t0, busy0, mine0, pg0), (t1, busy1, mine1, pg1) = self._start, self._sample()
        used = {name: mine1[name] - mine0[name] for name in mine1}
        if pg1:
            # A backend that ended within the window is missing: a lower bound.
            used["PostgreSQL"] = sum(cpu - pg0.get(pid, 0.0) for pid, cpu in pg1.items())
        return Usage(t1 - t0, used, max(0.0, busy1 - busy0 - sum(used.values())))


async def until(moment: float) -> None:
    """Sleep until `time.perf_counter()` reads ``moment`` (at once if past)."""
    await asyncio.sleep(max(0.0, moment - time.perf_counter()))


async def metered(
    window: Window, database: str, processes: dict[str, int], me: str = "bench clients"
) -> Usage:
    """CpuMeter over ``window``, as a task to run beside the load."""
    await until(window.start)
    cpu = CpuMeter(database, processes, me)
    await until(window.end)
    return cpu.stop()


LAG_BUCKET = "rummy_event_loop_lag_seconds_bucket"


def lag_buckets(metrics_port: int) -> dict[float, float]:
    """The game server's event-loop lag histogram, scraped: bound -> count so far."""
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    return {
        float(sample.labels["le"]): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == LAG_BUCKET
    }


async def loop_lag(window: Window, metrics_port: int) -> str:
    """How late the server's event loop ran its timer over ``window``: a stalled
    loop delays every call in flight at once, so this tells a latency tail
    made in the server's process from one made by the database or clients."""
    try:
        await until(window.start)
        before = await asyncio.to_thread(lag_buckets, metrics_port)
        await until(window.end)
        after = await asyncio.to_thread(lag_buckets, metrics_port)
    except (OSError, ValueError) as error:
        return f"game server event loop: not read ({error})"
    seen = {bound: after[bound] - before.get(bound, 0.0) for bound in sorted(after)}
    ticks = seen.get(math.inf, 0.0)
    if not ticks:
        return "game server event loop: no ticks seen"
    p99 = next(bound for bound, n in seen.items() if n >= 0.99 * ticks)
    late = 1 - seen.get(0.01, 0.0) / ticks
    top = max(bound for bound in seen if bound < math.inf)
    p99_text = f"> {ms(top)}" if p99 == math.inf else f"<= {ms(p99)}"
    return (
        f"game server event loop: {late:.1%} of {ticks:,.0f} ticks late by > 10 ms,"
        f" p99 lag {p99_text}"
    )
