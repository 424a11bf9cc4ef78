"""Soak benchmark: `python -m bench.soak [--minutes M]`.

Prints numbers, asserts nothing. Two game replicas and one matchmaker run as
their own processes (the real `rummy-game` / `rummy-matchmaker` entry points,
configured through RUMMY_* variables) on one fresh database; `rummy bots`
load generators keep many tables in play for the whole run, through the
matchmaker. Players and the matchmaker reach the game service through a
two-address target (replica A first, replica B as fail-over). Half-way
through, replica A gets SIGTERM and is started again on the same port.

Every interval the run prints games finished, the load generators' errors,
and for each server process its RSS, open file descriptors and sockets, plus
the database's connection count (pg_stat_activity). At the end: the RSS slope
of each process (memory must stay flat), split into anonymous pages (heap)
and file-backed pages (libraries), and PostgreSQL storage per finished
game (tables, table_events, action_requests, ...) so operators can size disks
and choose RUMMY_EVENT_RETENTION_DAYS.

The database is DATABASE_URL's server when set, else an embedded one; either
way the run creates its own database and drops it at the end. Everything
listens on 127.0.0.1 only and every process started is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import asyncpg
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.common import fresh_database
from services.common import eventloop
from services.common.db import database_name
from services.game import retention

REPO = Path(__file__).resolve().parent.parent
SECRET = "soak-secret-that-is-long-enough-for-hs256-tokens"
STOP_TIMEOUT_S = 30.0
PROGRESS = re.compile(r"games\s+(\d+)\s+actions\s+(\d+).*errors\s+(\d+)")
STORAGE_TABLES = (
    "tables",
    "table_events",
    "action_requests",
    "table_seats",
    "tickets",
    "matches",
    "players",
)


# --- processes ---------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


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
class Server:
    """One server process; `start()` again after `stop()` is a restart."""

    name: str
    entry: str
    env: dict[str, str]
    port: int
    log: IO[bytes]
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self) -> float:
        """Start and wait until its health check says SERVING; returns the seconds it took."""
        began = time.perf_counter()
        code = f"import sys; from services.launch import {self.entry}; sys.exit({self.entry}())"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=REPO,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
        )
        self.starts += 1
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as chan:
            stub = health_pb2_grpc.HealthStub(chan)
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{self.name} exited with {self.process.returncode}")
                with contextlib.suppress(grpc.aio.AioRpcError):
                    reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return time.perf_counter() - began
                if time.perf_counter() - began > 60:
                    raise RuntimeError(f"{self.name} did not become healthy in 60 s")
                await asyncio.sleep(0.1)

    async def stop(self) -> float:
        """SIGTERM, wait (SIGKILL after a while); returns the seconds it took."""
        began = time.perf_counter()
        process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(process.wait, STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                await asyncio.to_thread(process.wait)
        return time.perf_counter() - began


@dataclass
class Load:
    """One `rummy bots` load generator and what its progress lines say."""

    process: subprocess.Popen[bytes]
    games: int = 0
    actions: int = 0
    errors: int = 0
    final: dict[str, Any] = field(default_factory=dict)

    async def follow(self) -> None:
        assert self.process.stdout is not None
        stdout = self.process.stdout
        while line := await asyncio.to_thread(stdout.readline):
            text = line.decode(errors="replace").strip()
            if text.startswith("{"):
                with contextlib.suppress(ValueError):
                    self.final = json.loads(text)
                    self.games = self.final.get("games", self.games)
                    self.errors = self.final.get("errors", self.errors)
                    self.actions = self.final.get("actions", self.actions)
            elif m := PROGRESS.search(text):
                self.games, self.actions, self.errors = map(int, m.groups())


def start_load(matchmaker: int, tables: int, rate: float, seconds: float) -> Load:
    code = "import sys; from clients.cli.main import main; sys.exit(main())"
    argv = [
        sys.executable,
        "-c",
        code,
        "bots",
        "0",
        "--server",
        f"127.0.0.1:{matchmaker}",
        "--tables",
        str(tables),
        "--rate",
        str(rate),
        "--duration",
        str(seconds),
        "--json",
    ]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        argv,
        cwd=REPO,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    return Load(process)


# --- database ----------------------------------------------------------------


async def db_counts(con: asyncpg.Connection) -> tuple[int, int, int]:
    """(finished tables, active tables, connections to this database)."""
    row = await con.fetchrow(
        "SELECT count(*) FILTER (WHERE status = 'finished') AS finished,"
        " count(*) FILTER (WHERE status = 'active') AS active,"
        " (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()) AS conns"
        " FROM tables"
    )
    assert row is not None
    return row["finished"], row["active"], row["conns"]


async def storage(con: asyncpg.Connection, games: int) -> list[str]:
    await con.execute("ANALYZE")
    lines = [f"  {'relation':<16} {'rows':>9} {'total size':>11} {'per finished game':>18}"]
    total = 0
    for name in STORAGE_TABLES:
        rows = await con.fetchval(f"SELECT count(*) FROM {name}")
        size = await con.fetchval("SELECT pg_total_relation_size($1::regclass)", name)
        total += size
        per = f"{size / games / 1024:,.1f} KiB" if games else "n/a"
        lines.append(f"  {name:<16} {rows:>9,} {size / 2**20:>8,.2f} MiB {per:>18}")
    per = f"{total / games / 1024:,.1f} KiB" if games else "n/a"
    lines.append(f"  {'all of the above':<16} {'':>9} {total / 2**20:>8,.2f} MiB {per:>18}")
    events = await con.fetchval("SELECT count(*) FROM table_events")
    payload = await con.fetchval(
        "SELECT coalesce(sum(pg_column_size(payload)), 0) FROM table_events"
    )
    if games:
        lines.append(
            f"  event log: {events / games:,.0f} events per game,"
            f" {payload / max(events, 1):,.0f} B payload per event (before row overhead)"
        )
    db_size = await con.fetchval("SELECT pg_database_size(current_database())")
    lines.append(f"  whole database: {db_size / 2**20:,.1f} MiB")
    return lines


# --- the run -----------------------------------------------------------------


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
        prog="python -m bench.soak", description=(__doc__ or "").split("\n")[0]
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
