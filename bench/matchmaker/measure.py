"""How the phases take and show their numbers: durations, and the CPU cores each
process used."""

from __future__ import annotations

import contextlib
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import cpu_seconds, machine_busy


def secs(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def postgres_cpu(database: str) -> float:
    """CPU seconds of the PostgreSQL backends serving ``database``."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if (entry / "comm").read_text().strip() != "postgres":
                continue
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            if f" {database} " in cmd:
                total += cpu_seconds(entry.name)
    return total


class CpuMeter:
    """CPU cores used over a phase, by each server process, the clients and PostgreSQL."""

    def __init__(self, database: str, processes: dict[str, int]) -> None:
        self._database = database
        self._processes = processes
        self._start = self._sample()

    def _sample(self) -> tuple[float, float, dict[str, float]]:
        used = {name: cpu_seconds(pid) for name, pid in self._processes.items()}
        used["bench clients"] = cpu_seconds("self")
        if Path("/proc").exists():
            used["PostgreSQL"] = postgres_cpu(self._database)
        return time.perf_counter(), machine_busy() if Path("/proc/stat").exists() else 0.0, used

    def stop(self) -> CpuUse:
        (t0, busy0, used0), (t1, busy1, used1) = self._start, self._sample()
        used = {name: used1[name] - used0.get(name, 0.0) for name in used1}
        others = max(0.0, busy1 - busy0 - sum(used.values()))
        return CpuUse(max(t1 - t0, 1e-9), used, others)


@dataclass(frozen=True)
class CpuUse:
    """CPU seconds each process (or group) used over ``wall`` seconds."""

    wall: float
    used: dict[str, float]
    others: float

    def of(self, prefix: str) -> float:
        """CPU seconds of the processes whose names start with ``prefix``."""
        return sum(seconds for name, seconds in self.used.items() if name.startswith(prefix))

    def per_ticket_ms(self, prefix: str, tickets: int) -> float:
        return self.of(prefix) * 1000 / max(tickets, 1)

    def __str__(self) -> str:
        parts = [f"{name} {seconds / self.wall:.2f}" for name, seconds in self.used.items()]
        parts.append(f"everything else {self.others / self.wall:.2f}")
        return f"CPU cores used (of {os.cpu_count()}): " + ", ".join(parts)
