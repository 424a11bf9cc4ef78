"""The load phases: the drain (players queue with matching paused, then both
replicas match) and the flows (a burst, or steady arrivals, with matching
running), each reported as one block of lines."""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from bench.common import pct
from bench.matchmaker.clients import Clients
from bench.matchmaker.measure import CpuMeter, CpuUse, secs
from bench.matchmaker.servers import Child
from bench.matchmaker.store import add_players
from bench.matchmaker.tickets import Ticket, tickets_for
from services.common.db import database_name


@dataclass
class Phase:
    title: str
    tickets: list[Ticket]
    started: float = 0.0
    """When matching began (drain) or the first Enqueue was sent."""
    cpu: CpuUse | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def matched(self) -> list[Ticket]:
        return [t for t in self.tickets if not math.isnan(t.matched)]

    @property
    def rate(self) -> float:
        """Tickets matched per second over the phase, first event to last match."""
        ends = [t.matched for t in self.matched]
        if not ends:
            return 0.0
        return len(ends) / max(max(ends) - self.started, 1e-9)

    def cpu_per_ticket_ms(self) -> float:
        """Of every matchmaker replica together, per matched ticket."""
        if self.cpu is None:
            return math.nan
        return self.cpu.per_ticket_ms("matchmaker", len(self.matched))

    def waits(self) -> list[float]:
        return [t.matched - max(t.sent, self.started) for t in self.matched]

    def report(self, what: str) -> str:
        waits = self.waits()
        errors = [t.error for t in self.tickets if t.error]
        lines = [
            f"== {self.title} ==",
            f"  {len(self.matched):,} of {len(self.tickets):,} tickets matched"
            f" at {self.rate:,.0f} tickets/s",
            f"  {what}: p50 {secs(pct(waits, 50))}  p99 {secs(pct(waits, 99))}"
            f"  max {secs(max(waits, default=math.nan))}",
        ]
        if errors:
            common = max(set(errors), key=errors.count)
            lines.append(f"  {len(errors)} errors, most often: {common}")
        lines += [f"  {n}" for n in self.notes]
        if self.cpu is not None:
            n = len(self.matched)
            lines.append(f"  {self.cpu}")
            lines.append(
                f"  CPU per matched ticket: matchmakers {self.cpu_per_ticket_ms():.2f} ms,"
                f" PostgreSQL {self.cpu.per_ticket_ms('PostgreSQL', n):.2f} ms,"
                f" game server {self.cpu.per_ticket_ms('game', n):.2f} ms"
            )
        return "\n".join(lines)


async def settle(tickets: list[Ticket], tasks: list[asyncio.Task[None]]) -> int:
    """Wait for every stream to end. A failed Enqueue leaves its table short: once
    only such unfillable tickets wait (and stay so for 3 s), end their streams.
    Returns how many were left over."""
    pending = set(tasks)
    calm = 0
    while pending:
        _, pending = await asyncio.wait(pending, timeout=1.0)
        waiting = [t for t in tickets if not t.error and math.isnan(t.matched)]
        sizes = Counter(t.size for t in waiting)
        answered = all(not math.isnan(t.queued) for t in waiting)
        calm = calm + 1 if answered and all(n < s for s, n in sizes.items()) else 0
        if pending and calm >= 3:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            return len(waiting)
    return 0


@contextlib.asynccontextmanager
async def reporting(title: str, tickets: list[Ticket]) -> AsyncIterator[None]:
    """A line on stderr every few seconds, so a slow phase shows how far it got."""

    async def report() -> None:
        began = time.perf_counter()
        while True:
            await asyncio.sleep(5)
            queued = sum(not math.isnan(t.queued) for t in tickets)
            matched = sum(not math.isnan(t.matched) for t in tickets)
            failed = sum(bool(t.error) for t in tickets)
            print(
                f"  ... {title}: {time.perf_counter() - began:.0f} s, {queued:,} queued,"
                f" {matched:,} matched, {failed:,} failed of {len(tickets):,}",
                file=sys.stderr,
                flush=True,
            )

    task = asyncio.create_task(report())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def until_all_queued(tickets: list[Ticket]) -> None:
    while any(math.isnan(t.queued) and not t.error for t in tickets):
        await asyncio.sleep(0.05)


async def drain(
    dsn: str, clients: Clients, matchers: list[Child], meter: dict[str, int], count: int
) -> Phase:
    """Queue ``count`` players with matching paused, then match them all."""
    players = await add_players(dsn, "drain", count)
    clients.sign_in(players)
    phase = Phase(
        f"Drain: {count:,} queued players, then both replicas match",
        tickets_for(players, random.Random(1)),
    )
    opened = asyncio.Semaphore(512)
    enqueue_began = time.perf_counter()
    queueing = CpuMeter(database_name(dsn), meter)
    tasks = [asyncio.create_task(clients.follow(i, t, opened)) for i, t in enumerate(phase.tickets)]
    async with reporting("drain, queueing", phase.tickets):
        await until_all_queued(phase.tickets)
    queued_in = time.perf_counter() - enqueue_began
    first = [t.queued - t.sent for t in phase.tickets]
    phase.notes.append(
        f"queueing took {queued_in:.1f} s ({count / queued_in:,.0f} Enqueue/s,"
        f" matching paused; Enqueue p99 {secs(pct(first, 99))})"
    )
    phase.notes.append(f"while queueing: {queueing.stop()}")
    cpu = CpuMeter(database_name(dsn), meter)
    phase.started = time.perf_counter()
    for m in matchers:
        m.command("match")
    async with reporting("drain, matching", phase.tickets):
        left = await settle(phase.tickets, tasks)
    if left:
        phase.notes.append(f"{left} tickets left over (their tables were short of players)")
    phase.cpu = cpu.stop()
    for m in matchers:
        m.command("pause")
    return phase


async def flow(
    dsn: str,
    clients: Clients,
    meter: dict[str, int],
    count: int,
    rate: float | None,
    prefix: str,
) -> Phase:
    """``count`` players queue, at ``rate`` per second or all at once, matching running."""
    players = await add_players(dsn, prefix, count)
    clients.sign_in(players)
    tickets = tickets_for(players, random.Random(len(prefix)))
    if rate is None:
        title = f"Burst: {count:,} players queue at once, matching running"
    else:
        title = f"Steady: {count:,} players arrive at {rate:,.0f}/s, matching running"
        if prefix == "half":
            title += " (half the best rate with arrivals)"
    phase = Phase(title, tickets)
    cpu = CpuMeter(database_name(dsn), meter)
    phase.started = time.perf_counter()
    tasks = []
    async with reporting(prefix, tickets):
        if rate is None:
            # Every call at once, as when a tournament opens: the replicas hold
            # what they cannot take up yet (services/common/serving.py).
            tasks = [asyncio.create_task(clients.follow(i, t, None)) for i, t in enumerate(tickets)]
        else:
            for i, t in enumerate(tickets):
                due = phase.started + i / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(clients.follow(i, t, None)))
        left = await settle(tickets, tasks)
    if left:
        phase.notes.append(f"{left} tickets left over (their tables were short of players)")
    phase.cpu = cpu.stop()
    sent = [t.sent for t in tickets]
    offered = len(sent) / max(max(sent) - phase.started, 1e-9)
    phase.notes.append(
        f"Enqueue calls sent at {offered:,.0f}/s; first message (the ticket) p99"
        f" {secs(pct([t.queued - t.sent for t in tickets], 99))}"
    )
    return phase
