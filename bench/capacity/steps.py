"""One step of the run: grow the crowd to a number of players, let it settle,
then measure a window: the players' action latencies, the game server's own
latency and event-loop lag, the CPU of every process, memory and sockets."""

from __future__ import annotations

import argparse
import asyncio
import math
from dataclasses import dataclass, field
from pathlib import Path

from bench.capacity.loaders import Loaders
from bench.capacity.profiling import Profile, record, thread_cpu, thread_share
from bench.capacity.scrape import Scrape, quantile, scrape
from bench.capacity.settings import LOADER_LAG_MS, MIN_CONNECTED, TARGETS
from bench.common import pct
from bench.game.measure import CpuMeter, Usage, ms, rss_bytes
from bench.game.servers import Child
from bench.soak.measure import open_fds
from services.common.db import database_name

GROW_TIMEOUT_S = 600.0


@dataclass
class Rig:
    """What every step uses: the servers, the load processes, the baselines."""

    args: argparse.Namespace
    game: Child
    matchmaker_pid: int
    loaders: Loaders
    base_rss: int = 0
    base_sockets: int = 0
    profiles: Path = Path()
    idle: dict[str, float] = field(default_factory=dict)
    """Cores each process used with nobody playing."""


@dataclass
class Step:
    target: int
    players: int = 0
    seated: int = 0
    sockets: int = 0
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    actions: int = 0
    games: int = 0
    errors: int = 0
    messages: list[str] = field(default_factory=list)
    server: Scrape | None = None
    usage: Usage | None = None
    rss: int = 0
    loader_lag: float = math.nan
    threads: str = ""
    profile: Profile = field(default_factory=Profile)
    idle: dict[str, float] = field(default_factory=dict)

    @property
    def p99(self) -> float:
        return pct(self.latencies, 99)

    @property
    def lag_p99(self) -> float:
        return quantile(self.server.lag, 0.99) if self.server else math.nan

    @property
    def server_p99(self) -> float:
        return quantile(self.server.actions, 0.99) if self.server else math.nan

    def cpu(self, name: str, *, above_idle: bool = False) -> float:
        """CPU seconds a process (or, for "load", every load process) used; less what
        it uses with nobody playing, if ``above_idle``."""
        assert self.usage is not None
        used, wall = self.usage.used, self.usage.wall
        if name == "load":
            return sum(s for n, s in used.items() if n.startswith("load "))
        idle = self.idle.get(name, 0.0) * wall if above_idle else 0.0
        return max(0.0, used.get(name, 0.0) - idle)

    def per_player_minute_ms(self, name: str, *, above_idle: bool = True) -> float:
        """CPU per player-minute; by default above what the process uses idle."""
        cpu = self.cpu(name, above_idle=above_idle)
        return cpu * 1000 / max(self.players * self.seconds / 60, 1e-9)

    def per_action_ms(self, name: str, *, above_idle: bool = True) -> float:
        return self.cpu(name, above_idle=above_idle) * 1000 / max(self.actions, 1)

    def cores(self, name: str) -> float:
        assert self.usage is not None
        return self.cpu(name) / self.usage.wall

    def rss_per_player(self, base: int) -> float:
        return (self.rss - base) / max(self.players, 1)

    def too_slow(self) -> list[str]:
        """Why the server did not hold this step (empty: it did)."""
        why = []
        if not self.p99 * 1000 < TARGETS["action_p99_ms"]:
            why.append(f"p99 action latency {ms(self.p99)} passed {TARGETS['action_p99_ms']:g} ms")
        if not self.lag_p99 * 1000 < TARGETS["loop_lag_p99_ms"]:
            why.append(
                f"event-loop lag p99 {ms(self.lag_p99)} passed {TARGETS['loop_lag_p99_ms']:g} ms"
            )
        return why

    def not_connected(self) -> list[str]:
        """Why this step's players were not all there (empty: they were)."""
        if self.players < MIN_CONNECTED * self.target:
            return [f"only {self.players:,} of {self.target:,} players connected"]
        return []

    def loaders_lagged(self) -> list[str]:
        """Why the load processes, not the server, may have set the latencies."""
        if self.loader_lag * 1000 > LOADER_LAG_MS:
            return [
                f"the load processes' own event-loop lag p99 {ms(self.loader_lag)} passed"
                f" {LOADER_LAG_MS:g} ms: they, not the server, were the limit (add --loaders"
                " or cores)"
            ]
        return []


async def run_step(rig: Rig, number: int, target: int) -> Step:
    args, loaders = rig.args, rig.loaders
    step = Step(target, idle=rig.idle)
    shares = loaders.share(target)
    rate = args.ramp_rate / len(loaders.all)
    await loaders.ask([{"do": "grow", "players": n, "rate": rate} for n in shares], GROW_TIMEOUT_S)
    await asyncio.sleep(args.settle)
    pid = rig.game.pid
    processes = {"game server": pid, "matchmaker": rig.matchmaker_pid} | loaders.pids
    before = await asyncio.to_thread(scrape, rig.game.metrics_port)
    threads = thread_cpu(pid)
    meter = CpuMeter(database_name(rig.game.dsn), processes, "bench parent")
    out = rig.profiles / f"step-{number}-{target}-players.txt"
    profiling = asyncio.create_task(record(pid, args.seconds, out)) if args.profile else None
    replies = await loaders.ask({"do": "window", "seconds": args.seconds}, args.seconds + 60)
    step.usage = meter.stop()
    step.threads = thread_share(threads, thread_cpu(pid), step.usage.wall)
    step.server = (await asyncio.to_thread(scrape, rig.game.metrics_port)).since(before)
    step.rss = rss_bytes(pid)
    step.sockets = open_fds(pid)[1] - rig.base_sockets
    if profiling is not None:
        step.profile = await profiling
    step.seconds = step.usage.wall
    for r in replies:
        step.latencies += r["latencies"]
        step.actions += r["actions"]
        step.games += r["games"]
        step.errors += r["errors"]
        step.messages += r["messages"]
        step.players += r["players"]
        step.seated += r["seated"]
    step.loader_lag = max(r["lag_p99_s"] for r in replies)
    print_step(rig, number, step)
    return step


def print_step(rig: Rig, number: int, s: Step) -> None:
    assert s.usage is not None and s.server is not None
    rate = s.actions / s.seconds
    print(
        f"\n== Step {number}: {s.target:,} players ({s.players:,} connected, {s.seated:,}"
        f" seated, {s.server.watch_streams:,.0f} Watch streams, {s.sockets:,} more sockets"
        " on the game server) ==",
        flush=True,
    )
    print(
        f"  actions {rate:,.1f}/s ({s.actions:,} in {s.seconds:.0f} s, {s.games} games ended):"
        f" p50 {ms(pct(s.latencies, 50))}, p99 {ms(s.p99)} as the players timed them;"
        f" the server's own p99 {ms(s.server_p99)}; its event-loop lag p99 {ms(s.lag_p99)}"
    )
    print(
        f"  game server {s.cores('game server'):.2f} cores; above idle:"
        f" {s.per_player_minute_ms('game server'):.2f} ms CPU per player-minute,"
        f" {s.per_action_ms('game server'):.2f} ms per action"
        f" (all in: {s.per_player_minute_ms('game server', above_idle=False):.2f} and"
        f" {s.per_action_ms('game server', above_idle=False):.2f} ms);"
        f" RSS {s.rss / 2**20:,.0f} MiB ({s.rss_per_player(rig.base_rss) / 1024:,.1f} KiB"
        " per connected player above the idle server)"
    )
    print(
        f"  PostgreSQL {s.cores('PostgreSQL'):.2f} cores, above idle:"
        f" {s.per_action_ms('PostgreSQL'):.2f} ms per action,"
        f" {s.per_player_minute_ms('PostgreSQL'):.2f} ms per player-minute;"
        f" matchmaker {s.cores('matchmaker'):.2f} cores"
    )
    print(
        f"  load processes {s.cores('load'):.2f} cores"
        f" ({s.per_player_minute_ms('load'):.2f} ms per player-minute), their own"
        f" event-loop lag p99 at most {ms(s.loader_lag)};"
        f" other processes on the machine {s.usage.others / s.usage.wall:.2f} cores"
    )
    print(f"  game server threads (cores): {s.threads}")
    errors = f"{s.errors}" + (f", e.g. {s.messages[0]}" if s.messages else "")
    print(f"  errors: {errors}", flush=True)
