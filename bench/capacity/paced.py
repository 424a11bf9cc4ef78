"""The CPU comparison: a bare grpc.aio server (`bench.game`'s, in its own
process) doing at the step's pace what the game server's players cause, and
nothing else: each action a unary call and a message on each of the four
streams of its group (`bare_pace`), over as many connections as players."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass

from bench.capacity.loaders import Loaders
from bench.capacity.settings import SEATS
from bench.game.measure import CpuMeter, ms
from bench.game.servers import Child

OPEN_TIMEOUT_S = 600.0
IDLE_S = 3.0
"""Seconds the bare server's idle CPU is measured, its connections open."""


@dataclass(frozen=True)
class BarePaced:
    connections: int
    rate: float
    """Actions asked for per second."""
    acts: int
    received: int
    errors: int
    cpu_s: float
    """The bare server's CPU over the paced window, above its idle use with the
    same connections and streams open."""
    p99: float

    @property
    def per_action_ms(self) -> float:
        return self.cpu_s * 1000 / max(self.acts, 1)


async def bare_paced(loaders: Loaders, count: int, rate: float, seconds: float) -> BarePaced:
    async with Child("bare") as bare:
        target = f"127.0.0.1:{bare.port}"
        shares = loaders.share(count)
        opened = await loaders.ask(
            [{"do": "pace-open", "target": target, "count": n} for n in shares], OPEN_TIMEOUT_S
        )
        idle = CpuMeter("", {"bare server": bare.pid}, "bench parent")
        await asyncio.sleep(IDLE_S)
        still = idle.stop()
        idle_cores = still.used["bare server"] / still.wall
        meter = CpuMeter("", {"bare server": bare.pid}, "bench parent")
        replies = await loaders.ask(
            [{"do": "pace", "rate": rate * n / max(count, 1), "seconds": seconds} for n in shares],
            seconds + OPEN_TIMEOUT_S,
        )
        usage = meter.stop()
        await loaders.ask({"do": "pace-close"}, OPEN_TIMEOUT_S)
    found = BarePaced(
        connections=sum(r["opened"] for r in opened),
        rate=rate,
        acts=sum(r["acts"] for r in replies),
        received=sum(r["received"] for r in replies),
        errors=sum(r["errors"] for r in replies),
        cpu_s=usage.used["bare server"] - idle_cores * usage.wall,
        p99=max((r["p99_s"] for r in replies if not math.isnan(r["p99_s"])), default=math.nan),
    )
    print(
        f"\n== Bare grpc.aio server at the players' pace: {found.connections:,} connections,"
        f" one stream each, {found.rate:,.1f} actions/s (a unary call and a message on each"
        f" of the {SEATS} streams of its group) ==\n  {found.acts:,} actions,"
        f" {found.received:,} stream messages, {found.errors} errors, p99 {ms(found.p99)};"
        f" bare server {found.per_action_ms:.2f} ms CPU per action above idle",
        flush=True,
    )
    return found
