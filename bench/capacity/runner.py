"""The run: the echo ceiling, the servers and load processes, the steps up to
what the game server holds, the bare server's memory, then the summary."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import tempfile
import time
from pathlib import Path

import asyncpg
import grpc

from bench.capacity.loaders import Loaders
from bench.capacity.memory import bare_memory
from bench.capacity.paced import bare_paced
from bench.capacity.report import Echo, summary
from bench.capacity.settings import SEATS
from bench.capacity.steps import Rig, Step, run_step
from bench.capacity.thinking import ThinkTimes
from bench.common import fresh_database, machine_load, server_facts
from bench.game import servers as game_servers
from bench.game.ceilings import echo_ceiling
from bench.game.measure import CpuMeter, rss_bytes
from bench.matchmaker import servers as matchmaker_servers
from bench.soak.measure import open_fds
from services.common.db import database_name


async def run(args: argparse.Namespace) -> None:
    began = time.perf_counter()
    think = ThinkTimes(args.think_median, args.think_sigma)
    profiles = Path(args.profile_dir or tempfile.mkdtemp(prefix="rummy-capacity-"))
    profiles.mkdir(parents=True, exist_ok=True)
    async with fresh_database("capacity") as (dsn, source):
        print(
            f"Python {platform.python_version()}, grpcio {grpc.__version__},"
            f" asyncpg {asyncpg.__version__}, {os.cpu_count()} CPUs;"
            f" {await server_facts(dsn)} from {source}; {machine_load()}",
            flush=True,
        )
        print(f"Players: {think.describe()}; {args.loaders} load processes", flush=True)
        timings, usage = await echo_ceiling(
            argparse.Namespace(seconds=args.echo_seconds), "Ceiling: the cost of one call"
        )
        echo = Echo(usage.used["echo server"] * 1000 / max(len(timings.latencies), 1))
        async with contextlib.AsyncExitStack() as stack:
            game = await stack.enter_async_context(game_servers.Child("game", dsn))
            game_target = f"127.0.0.1:{game.port}"
            matchmaker = await stack.enter_async_context(
                matchmaker_servers.Child("matchmaker", dsn, "--game-target", game_target)
            )
            matchmaker.command("match")
            loaders = Loaders(args, f"127.0.0.1:{matchmaker.port}", game_target)
            stack.push_async_callback(loaders.close)
            await loaders.start()
            await asyncio.sleep(1.0)  # the idle server's memory, once started
            idle = await idle_cpu(game, matchmaker.pid, loaders.pids, args.idle_seconds)
            rig = Rig(
                args,
                game,
                matchmaker.pid,
                loaders,
                base_rss=rss_bytes(game.pid),
                base_sockets=open_fds(game.pid)[1],
                profiles=profiles,
                idle=idle,
            )
            steps, stopped = await climb(rig, began)
            await loaders.ask({"do": "stop"}, 300)
            held = [s for s in steps if not s.too_slow()]
            compared = (held or steps)[-1]
            bare = await bare_memory(loaders, compared.players)
            paced = await bare_paced(
                loaders, compared.players, compared.actions / compared.seconds, args.seconds
            )
            logged = {"game server": game.complaints(), "matchmaker": matchmaker.complaints()}
    for name, found in logged.items():
        if found:
            top = ", ".join(f"{what} x{n}" for what, n in found.most_common(4))
            print(f"  {name} logged: {top}")
    summary(
        steps=steps,
        stopped=stopped,
        base_rss=rig.base_rss,
        bare=bare,
        paced=paced,
        echo=echo,
        think=think,
        profiles=profiles,
    )
    print(f"  total run time {time.perf_counter() - began:.0f} s; {machine_load()}")


async def idle_cpu(
    game: game_servers.Child, matchmaker: int, loaders: dict[str, int], seconds: float
) -> dict[str, float]:
    """Cores each process uses with nobody playing: the servers' fixed costs (the
    sweeper's and presence's polls, the clock's beat, timers), which the figures
    per player leave out."""
    processes = {"game server": game.pid, "matchmaker": matchmaker} | loaders
    meter = CpuMeter(database_name(game.dsn), processes, "bench parent")
    await asyncio.sleep(seconds)
    usage = meter.stop()
    idle = {name: used / usage.wall for name, used in usage.used.items()}
    print(
        f"\n== Idle: no player connected ==\n  {usage.describe()}"
        "\n  (the figures per player and per action below are above these)",
        flush=True,
    )
    return idle


async def climb(rig: Rig, began: float) -> tuple[list[Step], str]:
    """Steps of more and more players until the server no longer holds one, the
    load cannot say more, or a bound is met; returns them and why it stopped."""
    args = rig.args
    steps: list[Step] = []
    target = args.start
    while True:
        step = await run_step(rig, len(steps) + 1, target)
        steps.append(step)
        if step.not_connected():
            return steps, "; ".join(step.not_connected())
        why = step.too_slow() + step.loaders_lagged()
        if why and not args.keep_going:
            return steps, "; ".join(why)
        if target >= args.max_players:
            return steps, f"--max-players ({args.max_players:,}) reached"
        grown = max(target + SEATS, round(target * args.growth / SEATS) * SEATS)
        grown = min(grown, args.max_players)
        next_takes = (grown - target) / args.ramp_rate + args.settle + args.seconds
        if time.perf_counter() - began + next_takes > args.minutes * 60:
            return steps, f"the next step ({grown:,} players) would end past --minutes"
        target = grown
