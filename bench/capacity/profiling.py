"""Where the game server's CPU goes: py-spy's samples of its Python stacks over
a window (folded into functions and areas of code), and the CPU of each of its
threads read from /proc (gRPC's C threads, which py-spy does not see)."""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import cpu_seconds

FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")
AREAS = (
    ("services/game/rules/", "rules engine"),
    ("services/game/", "game service"),
    ("services/common/", "services.common"),
    ("clients/", "client code"),
    ("grpc/", "grpc (Python and Cython)"),
    ("asyncpg/", "asyncpg"),
    ("google/protobuf/", "protobuf"),
    ("structlog/", "structlog"),
    ("logging/", "logging"),
    ("prometheus_client/", "prometheus_client"),
    ("opentelemetry/", "opentelemetry"),
    ("uvloop/", "event loop"),
    ("asyncio/runners.py", "C code under the event loop (uvloop, gRPC's core, orjson...)"),
    ("asyncio/", "event loop"),
)
ROOTS = ("services/common/eventloop.py",)
"""Frames under every sample (the process's main): left out of "time within"."""


def area_of(path: str) -> str:
    for marker, name in AREAS:
        if marker in path:
            return name
    return "other Python"


def py_spy() -> str | None:
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy")


@dataclass
class Profile:
    samples: int = 0
    own: Counter[str] = field(default_factory=Counter)
    """Samples with the function on top of the stack, by "function (file)"."""
    within: Counter[str] = field(default_factory=Counter)
    """Samples with the function anywhere on the stack."""
    areas: Counter[str] = field(default_factory=Counter)
    """Samples by the area of the function on top."""
    note: str = ""

    @classmethod
    def folded(cls, text: str) -> Profile:
        """From py-spy's raw output: one "frame;frame;... count" line per stack."""
        found = cls()
        for line in text.splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                continue
            n = int(count)
            frames = []
            for frame in stack.split(";"):
                m = FRAME.match(frame)
                frames.append((m["func"], m["file"]) if m else (frame, ""))
            if not frames:
                continue
            func, path = frames[-1]
            found.samples += n
            found.own[f"{func} ({short(path)})"] += n
            found.areas[area_of(path)] += n
            for name in {f"{f} ({short(p)})" for f, p in frames}:
                found.within[name] += n
        return found

    def lines(self, top: int) -> list[str]:
        if not self.samples:
            return [f"  no profile: {self.note or 'no samples'}"]
        total = self.samples
        out = [f"  {total:,} samples of busy Python threads (py-spy, 100 Hz)"]
        out.append(
            "  by area (function on top of the stack): "
            + ", ".join(f"{name} {n / total:.0%}" for name, n in self.areas.most_common())
        )
        out.append("  top functions, own time:")
        out += [f"    {n / total:5.1%}  {name}" for name, n in self.own.most_common(top)]
        ours = [
            (k, n)
            for k, n in self.within.most_common()
            if k.split("(")[-1].startswith("services") and not k.split("(")[-1].startswith(ROOTS)
        ]
        out.append("  the services' functions, time within them (callees included):")
        out += [f"    {n / total:5.1%}  {name}" for name, n in ours[:top]]
        return out


def short(path: str) -> str:
    """A frame's file from the package on (site-packages and the checkout cut off)."""
    for marker in ("site-packages/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
    for root in ("services/", "clients/", "bench/"):
        if root in path:
            return path[path.index(root) :]
    return path


async def record(pid: int, seconds: float, out: Path, *, native: bool = False) -> Profile:
    """py-spy's samples of ``pid`` over ``seconds`` (non-blocking, unless ``native``:
    the server is never paused), written to ``out`` in py-spy's raw (folded) format."""
    exe = py_spy()
    if exe is None:
        return Profile(note="py-spy is not installed (the dev extra has it)")
    process = await asyncio.create_subprocess_exec(
        exe,
        *("record", "--pid", str(pid), "--duration", str(max(1, round(seconds)))),
        *("--rate", "100", "--format", "raw", "--output", str(out)),
        # Native stacks need the process paused for each sample.
        *(("--native",) if native else ("--nonblocking",)),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await process.communicate()
    if process.returncode != 0 or not out.exists():
        return Profile(note=f"py-spy failed: {err.decode(errors='replace').strip()[-300:]}")
    return Profile.folded(out.read_text())


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of each of a process's threads, summed by thread name (the main
    thread, which runs the event loop, apart)."""
    used: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
        except OSError:
            continue
        if task.name == str(pid):
            name = "main (event loop)"
        used[name] = used.get(name, 0.0) + cpu_seconds(f"{pid}/task/{task.name}")
    return used


def thread_share(before: dict[str, float], after: dict[str, float], wall: float) -> str:
    used = {name: after[name] - before.get(name, 0.0) for name in after}
    busy = sorted(((s, n) for n, s in used.items() if s > 0), reverse=True)
    return ", ".join(f"{name} {seconds / wall:.2f}" for seconds, name in busy[:6]) or "none"
