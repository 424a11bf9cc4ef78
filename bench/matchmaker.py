"""Matchmaker benchmark: `python -m bench.matchmaker`.

Prints numbers, asserts nothing. One game server and two matchmaker replicas
run in their own processes on one fresh database; the clients are real
`Enqueue` streams from this process, for 2-, 3- and 4-player queues at once.

- Ceilings measured in the same run: the matching loop's database work alone
  (claim queued tickets with FOR UPDATE SKIP LOCKED, record the matches,
  update the tickets; two asyncpg workers, like two replicas, no gRPC), and
  CreateTables straight against the game service, in the batches the matching
  loop sends (tables/s, and the seats/s they stand for).
- Drain: 10,000 players queue while matching is paused, then both replicas
  match: tickets matched per second, and each ticket's time from the start
  of matching to its match message (p50/p99).
- Burst: 10,000 more players send Enqueue at the same moment with matching
  running: enqueue-to-match p50/p99 (the wait to be taken up included) and
  tickets matched per second.
- Steady arrivals at the target rate (1,000 tickets/s by default): the queue
  always holds partners, so every ticket can be matched at once; enqueue-to-
  match p50/p99 is the figure to hold against "< 2 s". Then the same at half
  the best rate measured while players were arriving (burst, steady), which
  the machine can sustain: a rate above capacity only measures how fast a
  backlog grows. (The drain matches with no Enqueue calls competing for the
  same cores, so its rate is no guide to what arrivals the machine keeps up with.)

The database is DATABASE_URL's server when set, else an embedded one; either
way the run creates its own database and drops it at the end. Every server
listens on 127.0.0.1 only and every process it starts is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import random
import signal
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc

from bench import common
from bench.common import (
    channel,
    cpu_seconds,
    fresh_database,
    machine_busy,
    machine_load,
    pct,
    server_facts,
    verdict,
)
from services.common import eventloop
from services.common.auth import issue_service_token, issue_token
from services.common.db import database_name, open_pool
from services.common.heap import keep_heap_small
from services.common.limits import Limits
from services.common.logs import configure
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, matchmaker_pb2_grpc, table_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.game.server import GameConfig, GameServer
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer
from services.matchmaker.table_maker import CREATE_BATCH, CREATE_IN_FLIGHT

TARGETS = {"matched_per_s": 1_000.0, "p99_s": 2.0}
"""The issue's targets, printed next to each number (never asserted)."""

SECRET = "bench-secret-that-is-long-enough-for-hs256"
REPLICAS = 2
PHASE_TIMEOUT_S = 180.0
"""No phase may take longer: a stuck service ends the run instead of hanging it."""

UNLIMITED = Limits(player_rate=0, peer_rate=0, streams_per_player=0)
OPTIONS = table_pb2.TableOptions(turn_timer_ms=3_600_000)
"""Nobody plays the tables the run creates: with the 45 s default their turns would
time out while later phases run, and the game service's sweeper would compete with
the matchmaker for the same cores."""
"""The load comes from a few processes, not from players: no per-peer limit."""


# --- small helpers -----------------------------------------------------------


def secs(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def split_sizes(total: int) -> dict[int, int]:
    """Tickets per queue size, about a third each, adding up to ``total`` (at least 5)
    with every table fillable."""
    per = total // 3
    counts = {size: per - per % size for size in (2, 3, 4)}
    rest = total - sum(counts.values())
    if rest % 2:
        counts[3] += 3
        rest -= 3
    counts[2] += rest
    return counts


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

    def stop(self) -> str:
        (t0, busy0, used0), (t1, busy1, used1) = self._start, self._sample()
        wall = max(t1 - t0, 1e-9)
        used = {name: used1[name] - used0.get(name, 0.0) for name in used1}
        others = max(0.0, busy1 - busy0 - sum(used.values()))
        parts = [f"{name} {seconds / wall:.2f}" for name, seconds in used.items()]
        parts.append(f"everything else {others / wall:.2f}")
        return f"CPU cores used (of {os.cpu_count()}): " + ", ".join(parts)


# --- server processes --------------------------------------------------------


async def _serve(args: argparse.Namespace) -> None:
    """Child process: one server until stdin closes or SIGTERM.

    A matchmaker starts with its matching loop paused; the line "match" on
    stdin starts it, "pause" stops it again."""
    configure(fmt="json", level="info")  # logging as a production replica's
    async with keep_heap_small():  # and its allocator settings (services/launch.py)
        await _run_server(args)


async def _run_server(args: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    commands: asyncio.Queue[str] = asyncio.Queue()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def read_stdin() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(commands.put_nowait, line.strip())
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=read_stdin, daemon=True).start()
    server: GameServer | MatchmakerServer
    if args.serve == "game":
        server = GameServer(GameConfig(dsn=args.dsn, secret=SECRET, limits=UNLIMITED))
        await server.start()
    else:
        server = MatchmakerServer(
            MatchmakerConfig(
                dsn=args.dsn,
                secret=SECRET,
                game_target=args.game_target,
                ticket_ttl_s=3_600,
                limits=UNLIMITED,
            )
        )
        await server.start(matching=False)
    os.write(args.port_fd, f"{server.port}\n".encode())
    os.close(args.port_fd)
    matching: asyncio.Task[None] | None = None
    stopping = asyncio.create_task(stop.wait())
    while not stop.is_set():
        command = asyncio.create_task(commands.get())
        await asyncio.wait({command, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not command.done():
            command.cancel()
            break
        if isinstance(server, MatchmakerServer) and server.matcher is not None:
            if command.result() == "match" and matching is None:
                matching = asyncio.create_task(server.matcher.run())
            elif command.result() == "pause" and matching is not None:
                matching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await matching
                matching = None
    if matching is not None:
        matching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await matching
    await server.stop(0)


class Child(common.Child):
    """One server (`game` or `matchmaker`) in its own process; see `bench.common.Child`."""

    def __init__(self, role: str, dsn: str, *extra: str) -> None:
        super().__init__("bench.matchmaker", role, dsn, *extra, env={"RUMMY_LOG_LEVEL": "warning"})


# --- the database ------------------------------------------------------------


async def add_players(dsn: str, prefix: str, count: int) -> list[str]:
    """Players as AuthService.Login leaves them, written in one COPY."""
    ids = [f"{prefix}-{i:05d}" for i in range(count)]
    con = await asyncpg.connect(dsn)
    try:
        await con.copy_records_to_table(
            "players",
            records=[(pid, f"Bench {pid}") for pid in ids],
            columns=["id", "display_name"],
        )
    finally:
        await con.close()
    return ids


# --- ceiling (a): the matching loop's database work, straight from asyncpg ---


async def claim_ceiling(dsn: str, count: int, batch: int) -> tuple[float, int]:
    """Tickets/s through claim (SKIP LOCKED) + record matches + update tickets,
    by two workers; the same statements as `services/matchmaker`, minus gRPC."""
    sizes = split_sizes(count)
    con = await asyncpg.connect(dsn)
    try:
        rows = [
            (uuid.uuid4(), f"ceil-{size}-{i}", size, "cafe", "{}", "bench-ceiling")
            for size, n in sizes.items()
            for i in range(n)
        ]
        await con.executemany(
            "INSERT INTO tickets (id, player_id, table_size, ruleset, options, family,"
            " expires_at) VALUES ($1, $2, $3, $4, $5::jsonb, $6, now() + interval '1 hour')",
            rows,
        )
    finally:
        await con.close()
    pools = [await open_pool(dsn, max_size=1) for _ in range(REPLICAS)]
    done = 0

    async def worker(pool: asyncpg.Pool) -> None:
        nonlocal done
        while True:
            async with pool.acquire() as c, c.transaction():
                claimed = await c.fetch(
                    "SELECT id, table_size FROM tickets WHERE state = 'queued'"
                    " AND expires_at > now() ORDER BY created_at LIMIT $1"
                    " FOR UPDATE SKIP LOCKED",
                    batch,
                )
                if not claimed:
                    return
                by_size: dict[int, list[uuid.UUID]] = {}
                for r in claimed:
                    by_size.setdefault(r["table_size"], []).append(r["id"])
                seats: list[tuple[uuid.UUID, uuid.UUID, int, int]] = []
                tables: list[tuple[uuid.UUID, bytes]] = []
                for size, ids in by_size.items():
                    for k in range(0, len(ids) - len(ids) % size, size):
                        table = uuid.uuid4()
                        tables.append((table, b"\x00" * 200))
                        seats += [(t, table, s, size) for s, t in enumerate(ids[k : k + size])]
                await c.executemany(
                    "INSERT INTO matches (table_id, request) VALUES ($1, $2)", tables
                )
                await c.executemany(
                    "UPDATE tickets SET state = 'matched', table_id = $2, seat = $3,"
                    " seated = $4 WHERE id = $1",
                    seats,
                )
                done += len(seats)
                if not seats:
                    # Only the last partial tables are left: nothing more to seat.
                    return

    started = time.perf_counter()
    try:
        await asyncio.gather(*(worker(p) for p in pools))
    finally:
        for p in pools:
            await p.close()
    elapsed = time.perf_counter() - started
    con = await asyncpg.connect(dsn)
    try:
        await con.execute("DELETE FROM tickets WHERE family = 'bench-ceiling'")
        await con.execute("DELETE FROM matches")
    finally:
        await con.close()
    return done / elapsed, done


# --- ceiling (b): CreateTables straight against the game service -------------


async def create_table_ceiling(
    game_port: int, tables: int, per_call: int, in_flight: int
) -> tuple[float, float]:
    """(tables/s, seats/s) of CreateTables calls with the service credential,
    ``per_call`` tables per call, as the matching loop sends them."""
    metadata = (
        (
            "authorization",
            f"Bearer {issue_service_token('matchmaker', secret=SECRET, now=time.time())}",
        ),
    )
    chans = [channel(game_port, i) for i in range(4)]
    stubs = [game_pb2_grpc.GameServiceStub(c) for c in chans]
    gate = asyncio.Semaphore(in_flight)
    seats = 0

    def request(i: int) -> game_pb2.CreateTableRequest:
        nonlocal seats
        size = (2, 3, 4)[i % 3]
        seats += size
        return game_pb2.CreateTableRequest(
            table_id=str(uuid.uuid4()),
            ruleset="cafe",
            options=OPTIONS,
            players=[
                game_pb2.SeatedPlayer(player_id=f"ceil-{i}-{s}", display_name=f"C{s}")
                for s in range(size)
            ],
        )

    async def batch(k: int, first: int) -> None:
        calls = game_pb2.CreateTablesRequest(
            tables=[request(i) for i in range(first, min(first + per_call, tables))]
        )
        async with gate:
            reply = await stubs[k % len(stubs)].CreateTables(calls, metadata=metadata, timeout=30)
        assert all(r.HasField("table") for r in reply.results), reply

    started = time.perf_counter()
    try:
        await asyncio.gather(
            *(batch(k, first) for k, first in enumerate(range(0, tables, per_call)))
        )
    finally:
        for c in chans:
            await c.close()
    elapsed = time.perf_counter() - started
    return tables / elapsed, seats / elapsed


# --- clients -----------------------------------------------------------------


@dataclass(slots=True)
class Ticket:
    player_id: str
    size: int
    sent: float = math.nan
    queued: float = math.nan
    matched: float = math.nan
    table_id: str = ""
    error: str = ""


@dataclass
class Phase:
    title: str
    tickets: list[Ticket]
    started: float = 0.0
    """When matching began (drain) or the first Enqueue was sent."""
    cpu: str = ""
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
        if self.cpu:
            lines.append(f"  {self.cpu}")
        return "\n".join(lines)


class Clients:
    """Enqueue streams spread over several connections to every replica."""

    def __init__(self, ports: list[int], per_replica: int) -> None:
        self.channels = [channel(p, i) for p in ports for i in range(per_replica)]
        self.stubs = [matchmaker_pb2_grpc.MatchmakerServiceStub(c) for c in self.channels]
        self.tokens: dict[str, tuple[tuple[str, str]]] = {}

    async def close(self) -> None:
        for c in self.channels:
            await c.close()

    def sign_in(self, players: list[str]) -> None:
        """Tokens issued before a phase starts, as a player's app holds one before
        it taps "play": signing them is the clients' work, not the service's."""
        now = time.time()
        for player_id in players:
            token = issue_token(player_id, secret=SECRET, now=now)
            self.tokens[player_id] = (("authorization", f"Bearer {token}"),)

    async def follow(self, i: int, ticket: Ticket, opened: asyncio.Semaphore | None) -> None:
        """One player's stream, from the Enqueue call to the match message."""
        stub = self.stubs[i % len(self.stubs)]
        request = mm.EnqueueRequest(table_size=ticket.size, ruleset="cafe", options=OPTIONS)
        held = opened is not None
        if opened is not None:
            await opened.acquire()
        ticket.sent = time.perf_counter()
        try:
            call = stub.Enqueue(request, metadata=self.tokens[ticket.player_id])
            async for update in call:
                kind = update.WhichOneof("update")
                if kind == "ticket" and math.isnan(ticket.queued):
                    ticket.queued = time.perf_counter()
                    if held and opened is not None:
                        opened.release()
                        held = False
                elif kind == "match":
                    ticket.matched = time.perf_counter()
                    ticket.table_id = update.match.table_id
        except grpc.aio.AioRpcError as error:
            ticket.error = f"{error.code().name}: {error.details()}"
        finally:
            if held and opened is not None:
                opened.release()


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


def tickets_for(players: list[str], rng: random.Random) -> list[Ticket]:
    sizes = split_sizes(len(players))
    order = [size for size, n in sizes.items() for _ in range(n)]
    rng.shuffle(order)
    return [Ticket(p, s) for p, s in zip(players, order, strict=True)]


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


async def check_store(dsn: str) -> str:
    """What the database says after the run: every ticket matched once, nobody twice."""
    con = await asyncpg.connect(dsn)
    try:
        states = {
            r["state"]: r["n"]
            for r in await con.fetch("SELECT state, count(*) AS n FROM tickets GROUP BY state")
        }
        twice = await con.fetchval(
            "SELECT count(*) FROM (SELECT player_id FROM table_seats GROUP BY player_id"
            " HAVING count(*) > 1) AS d"
        )
        matches = {
            r["state"]: r["n"]
            for r in await con.fetch("SELECT state, count(*) AS n FROM matches GROUP BY state")
        }
    finally:
        await con.close()
    return (
        f"tickets by state {json.dumps(states)}; matches {json.dumps(matches)};"
        f" players seated twice: {twice}"
    )


# --- the run -----------------------------------------------------------------


async def run(args: argparse.Namespace) -> None:
    began = time.perf_counter()
    async with fresh_database("bench") as (dsn, source):
        print(
            f"Python {platform.python_version()}, grpcio {grpc.__version__},"
            f" asyncpg {asyncpg.__version__}, {os.cpu_count()} CPUs;"
            f" {await server_facts(dsn)} from {source}; {machine_load()}",
            flush=True,
        )
        claim_rate, claimed = await claim_ceiling(dsn, args.players, 2_000)
        print(
            f"ceiling: claim + record + update in asyncpg, {REPLICAS} workers:"
            f" {claim_rate:,.0f} tickets/s ({claimed:,} tickets)",
            flush=True,
        )
        async with contextlib.AsyncExitStack() as stack:
            game = await stack.enter_async_context(Child("game", dsn))
            matchers = [
                await stack.enter_async_context(
                    Child("matchmaker", dsn, "--game-target", f"127.0.0.1:{game.port}")
                )
                for _ in range(REPLICAS)
            ]
            meter = {"game": game.pid} | {
                f"matchmaker {i + 1}": m.pid for i, m in enumerate(matchers)
            }
            in_flight = REPLICAS * CREATE_IN_FLIGHT
            table_rate, seat_rate = await create_table_ceiling(
                game.port, args.tables, CREATE_BATCH, in_flight
            )
            print(
                f"ceiling: CreateTables against the game service, {CREATE_BATCH} tables"
                f" per call, {in_flight} calls in flight:"
                f" {table_rate:,.0f} tables/s = {seat_rate:,.0f} seats/s",
                flush=True,
            )
            clients = Clients([m.port for m in matchers], args.channels)
            phases = []
            try:
                async with asyncio.timeout(PHASE_TIMEOUT_S):
                    phases.append(await drain(dsn, clients, matchers, meter, args.players))
                print(phases[-1].report("time from the start of matching to the match"), flush=True)
                for m in matchers:
                    m.command("match")
                async with asyncio.timeout(PHASE_TIMEOUT_S):
                    phases.append(await flow(dsn, clients, meter, args.players, None, "burst"))
                print(phases[-1].report("enqueue-to-match"), flush=True)
                steady = int(args.rate * args.seconds)
                async with asyncio.timeout(PHASE_TIMEOUT_S):
                    phases.append(await flow(dsn, clients, meter, steady, args.rate, "steady"))
                print(phases[-1].report("enqueue-to-match"), flush=True)
                # Within what this machine sustains: half the best rate seen while
                # players were arriving (phases[0] is the drain, with no arrivals).
                half = max(10.0, max(p.rate for p in phases[1:]) / 2)
                async with asyncio.timeout(PHASE_TIMEOUT_S):
                    phases.append(
                        await flow(dsn, clients, meter, int(half * args.seconds), half, "half")
                    )
                print(phases[-1].report("enqueue-to-match"), flush=True)
            finally:
                await clients.close()
            children = [game, *matchers]
            logged = {name: c.complaints() for name, c in zip(meter, children, strict=True)}
        print(f"after the run: {await check_store(dsn)}")
        for name, found in logged.items():
            if found:
                top = ", ".join(f"{what} x{n}" for what, n in found.most_common(4))
                print(f"  {name} logged: {top}")

    drained, burst, steady_phase, half_phase = phases
    best = max(drained.rate, burst.rate)
    p99 = pct(steady_phase.waits(), 99)
    half_p99 = pct(half_phase.waits(), 99)
    print("\n== Summary against the targets ==")
    print(
        f"  tickets matched/s, {args.players:,} queued players, {REPLICAS} replicas:"
        f" drain {drained.rate:,.0f}, burst {burst.rate:,.0f}"
        f"  [target >= {TARGETS['matched_per_s']:,.0f}:"
        f" {verdict(best >= TARGETS['matched_per_s'])}]"
    )
    print(
        f"    ceilings: {seat_rate:,.0f} seats/s of CreateTables ({best / seat_rate:.2f} of it),"
        f" {claim_rate:,.0f} tickets/s of raw claim-and-update ({best / claim_rate:.2f} of it)"
    )
    print(
        f"  p99 enqueue-to-match, {args.rate:,.0f} arrivals/s (partners always waiting):"
        f" {secs(p99)}  [target < {TARGETS['p99_s']:.0f} s: {verdict(p99 < TARGETS['p99_s'])}]"
    )
    print(
        f"    p50 {secs(pct(steady_phase.waits(), 50))};"
        f" burst of {args.players:,}: p50 {secs(pct(burst.waits(), 50))},"
        f" p99 {secs(pct(burst.waits(), 99))}"
    )
    print(
        f"  p99 enqueue-to-match at {half_phase.rate:,.0f} tickets/s (half the best rate"
        f" measured with arrivals): {secs(half_p99)}  [target < {TARGETS['p99_s']:.0f} s:"
        f" {verdict(half_p99 < TARGETS['p99_s'])}]"
    )
    print(f"  total run time {time.perf_counter() - began:.0f} s; {machine_load()}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.matchmaker", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "--players", type=int, default=10_000, help="players queued at once (default 10000)"
    )
    parser.add_argument(
        "--rate", type=float, default=1_000.0, help="steady arrivals per second (default 1000)"
    )
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="length of each steady phase (default 5)"
    )
    parser.add_argument(
        "--tables",
        type=int,
        default=2_000,
        help="tables of the CreateTables ceiling (default 2000)",
    )
    parser.add_argument(
        "--channels", type=int, default=4, help="client connections per replica (default 4)"
    )
    parser.add_argument("--serve", choices=("game", "matchmaker"), help=argparse.SUPPRESS)
    parser.add_argument("--dsn", default="", help=argparse.SUPPRESS)
    parser.add_argument("--port-fd", type=int, default=-1, help=argparse.SUPPRESS)
    parser.add_argument("--game-target", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        eventloop.run(_serve(args))
        return
    eventloop.run(run(args))


if __name__ == "__main__":
    main()
