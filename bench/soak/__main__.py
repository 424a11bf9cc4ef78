"""`python -m bench.soak`: the options, and the run that starts the servers and
the load, restarts game-a half-way, samples every interval and prints the
results, the storage and the servers' logs."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import asyncpg
import grpc

import bench.soak
from bench.common import fresh_database
from bench.soak.load import Load, start_load
from bench.soak.measure import Sample, memory_mb, memory_slopes, open_fds
from bench.soak.servers import Server, free_port
from bench.soak.settings import SECRET
from bench.soak.store import db_counts, storage
from services.common import eventloop
from services.common.db import database_name
from services.game import retention


async def run(args: argparse.Namespace) -> None:
    total_s = args.minutes * 60.0
    interval = args.interval or min(30.0, max(5.0, total_s / 8))
    restart_at = total_s / 2
    began = time.perf_counter()
    async with fresh_database("soak") as (dsn, source):
        con = await asyncpg.connect(dsn)
        version = await con.fetchval("SHOW server_version")
        print(
            f"Python {platform.python_version()}, grpcio {grpc.__version__},"
            f" {os.cpu_count()} CPUs; PostgreSQL {version} from {source}"
        )
        ports = {"game-a": free_port(), "game-b": free_port(), "matchmaker": free_port()}
        games_target = f"ipv4:127.0.0.1:{ports['game-a']},127.0.0.1:{ports['game-b']}"
        base = {
            **os.environ,
            "DATABASE_URL": dsn,
            "RUMMY_TOKEN_SECRET": SECRET,
            "RUMMY_GAME_METRICS_PORT": "0",
            "RUMMY_MATCHMAKER_METRICS_PORT": "0",
            "RUMMY_GAME_TARGET": games_target,
            "RUMMY_GAME_PUBLIC_TARGET": games_target,
            "RUMMY_SHUTDOWN_GRACE_S": "5",
            "RUMMY_LOG_FORMAT": "json",
            "RUMMY_LOG_LEVEL": "warning",
        }
        logs = tempfile.TemporaryDirectory(prefix="rummy-soak-")
        servers: dict[str, Server] = {}
        for name, port in ports.items():
            listen = "RUMMY_MATCHMAKER_LISTEN" if name == "matchmaker" else "RUMMY_GAME_LISTEN"
            entry = "matchmaker_main" if name == "matchmaker" else "game_main"
            log = open(Path(logs.name) / f"{name}.log", "wb")  # noqa: SIM115 - closed below
            env = {**base, listen: f"127.0.0.1:{port}"}
            servers[name] = Server(name, entry, env, port, log)
        loads: list[Load] = []
        followers: list[asyncio.Task[None]] = []
        samples: list[Sample] = []
        try:
            for server in servers.values():
                took = await server.start()
                print(f"  {server.name} on 127.0.0.1:{server.port}, healthy in {took:.1f} s")
            per = max(1, args.tables // args.loaders)
            rate = args.rate / args.loaders
            print(
                f"Soak: {args.minutes:g} min, {args.loaders} load generators x {per} tables,"
                f" at most {args.rate:g} actions/s in all; game-a restarted at"
                f" {restart_at:.0f} s; a line every {interval:.0f} s\n"
            )
            print(
                f"{'time':>6} {'games':>6} {'active':>6} {'actions':>8} {'errors':>6}"
                f" {'pg conns':>8}  per process: RSS MB / fds / sockets"
            )
            started = time.perf_counter()
            loads = [
                start_load(ports["matchmaker"], per, rate, total_s) for _ in range(args.loaders)
            ]
            followers = [asyncio.create_task(load.follow()) for load in loads]
            restarted = False
            next_sample = started
            while True:
                now = time.perf_counter() - started
                if not restarted and now >= restart_at:
                    restarted = True
                    a = servers["game-a"]
                    down = await a.stop()
                    up = await a.start()
                    print(
                        f"  -- game-a restarted at {now:.0f} s: SIGTERM to exit {down:.1f} s,"
                        f" start to healthy {up:.1f} s (same port {a.port})"
                    )
                if time.perf_counter() >= next_sample:
                    next_sample += interval
                    finished, active, conns = await db_counts(con)
                    at = time.perf_counter() - started
                    memory: dict[str, dict[str, float]] = {}
                    cells = []
                    for s in servers.values():
                        key = f"{s.name}#{s.starts}"
                        memory[key] = memory_mb(s.pid)
                        fds, socks = open_fds(s.pid)
                        cells.append(f"{s.name} {memory[key]['rss']:.0f}/{fds}/{socks}")
                    samples.append(Sample(at, memory))
                    print(
                        f"{at:>5.0f}s {finished:>6} {active:>6}"
                        f" {sum(x.actions for x in loads):>8} {sum(x.errors for x in loads):>6}"
                        f" {conns:>8}  " + "  ".join(cells),
                        flush=True,
                    )
                if all(x.process.poll() is not None for x in loads) or now > total_s + 60:
                    break
                await asyncio.sleep(0.5)
            await asyncio.gather(*followers)
            finished, active, conns = await db_counts(con)
            print("\n== Result ==")
            print(
                f"  games finished {finished} ({finished / (total_s / 60):,.1f}/min);"
                f" tables still in play at the end {active}"
            )
            for i, load in enumerate(loads):
                r = load.final
                lat = r.get("latency_ms", {})
                print(
                    f"  load generator {i + 1}: exit {load.process.returncode},"
                    f" games {r.get('games', load.games)}, actions {r.get('actions', '?')}"
                    f" ({r.get('actions_per_s', '?')}/s), stale {r.get('stale', '?')},"
                    f" errors {r.get('errors', load.errors)};"
                    f" latency p50 {lat.get('p50', '?')} ms p99 {lat.get('p99', '?')} ms"
                )
                for message in r.get("error_messages", [])[:5]:
                    print(f"      {message}")
            print(
                "  Memory slope, least squares after the first sample of each process (MB/min):"
                " RSS over its whole life and over its second half, once warm (a leak keeps"
                " climbing there); then the second half's anonymous pages (heap: a leak's"
                " part) and file-backed pages (library code paged in on first use):"
            )
            for line in memory_slopes(samples):
                print(line)
            print(f"  connections to the database at the end: {conns}")
            print(f"\n== PostgreSQL storage ({finished} finished games) ==")
            for line in await storage(con, finished):
                print(line)
            cleared = await retention.purge_answers(con, older_than_s=0)
            await con.execute("VACUUM action_requests")  # give the freed pages back
            print(
                f"  ... and once the stored request answers are purged ({cleared} finished"
                f" tables; the game service does it {retention.ANSWER_RETENTION_S / 3600:g} h"
                " after a table finished):"
            )
            for line in await storage(con, finished):
                print(line)
        finally:
            for load in loads:
                if load.process.poll() is None:
                    load.process.kill()
                    load.process.wait()
            for task in followers:
                task.cancel()
            for server in reversed(list(servers.values())):
                await server.stop()
                server.log.close()
            print("\n== Server logs (warnings and errors) ==")
            for server in servers.values():
                lines = Path(server.log.name).read_text(errors="replace").splitlines()
                levels: dict[str, int] = {}
                for line in lines:
                    with contextlib.suppress(ValueError, AttributeError):
                        level = json.loads(line).get("level", "?")
                        levels[level] = levels.get(level, 0) + 1
                events = ", ".join(f"{n} {lv}" for lv, n in sorted(levels.items())) or "none"
                print(f"  {server.name}: {events}; {len(lines)} lines")
            logs.cleanup()
            await con.close()
            print(f"  dropping database {database_name(dsn)}")
    print(f"total run time {time.perf_counter() - began:.0f} s")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=(bench.soak.__doc__ or "").split("\n")[0]
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="run time (default 10)")
    parser.add_argument("--tables", type=int, default=40, help="tables kept in play (default 40)")
    parser.add_argument(
        "--rate", type=float, default=200.0, help="actions/s, at most, in all (default 200)"
    )
    parser.add_argument("--loaders", type=int, default=2, help="load generator processes")
    parser.add_argument(
        "--interval", type=float, default=0.0, help="seconds between lines (default: 30 or less)"
    )
    args = parser.parse_args(argv)
    eventloop.run(run(args))


if __name__ == "__main__":
    main()
