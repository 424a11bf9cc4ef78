"""What the run samples of each server process (memory, file descriptors,
sockets), and the memory slopes it draws from the samples."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

MEMORY_FIELDS = {"VmRSS": "rss", "RssAnon": "anon", "RssFile": "file"}
"""Resident memory, and its two parts: anonymous pages (heaps, stacks: where a
leak grows) and file-backed pages (code and data of the libraries, which grow
as code paths run for the first time and are bounded by the files' size)."""


def memory_mb(pid: int) -> dict[str, float]:
    found = dict.fromkeys(MEMORY_FIELDS.values(), float("nan"))
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name = MEMORY_FIELDS.get(line.partition(":")[0])
            if name:
                found[name] = int(line.split()[1]) / 1024
    return found


def open_fds(pid: int) -> tuple[int, int]:
    """(open file descriptors, of which sockets) of a process."""
    fds = sockets = 0
    with contextlib.suppress(OSError):
        for fd in os.scandir(f"/proc/{pid}/fd"):
            fds += 1
            with contextlib.suppress(OSError):
                if os.readlink(fd.path).startswith("socket:"):
                    sockets += 1
    return fds, sockets


@dataclass
class Sample:
    at: float
    memory: dict[str, dict[str, float]]


def slope_mb_per_min(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) points, in MB per minute."""
    n = len(points)
    if n < 2:
        return float("nan")
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    if var == 0:
        return float("nan")
    return sum((t - mx) * (v - my) for t, v in points) / var * 60


def memory_slopes(samples: list[Sample]) -> list[str]:
    lines = []
    for key in sorted({k for s in samples for k in s.memory}):
        seen = [s for s in samples if key in s.memory][1:]
        if not seen:
            continue
        warm = seen[len(seen) // 2 :]

        def slope(part: str, of: list[Sample], key: str = key) -> float:
            return slope_mb_per_min([(s.at, s.memory[key][part]) for s in of])

        first, last = seen[0].memory[key]["rss"], seen[-1].memory[key]["rss"]
        lines.append(
            f"    {key:<14} {first:6.1f} -> {last:6.1f} MB over {seen[-1].at - seen[0].at:4.0f} s"
            f" ({len(seen)} samples): RSS {slope('rss', seen):+.2f}, second half"
            f" {slope('rss', warm):+.2f} = anon {slope('anon', warm):+.2f}"
            f" + file {slope('file', warm):+.2f} MB/min"
        )
    return lines
