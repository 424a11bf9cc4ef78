"""Game service benchmark: `python -m bench.game`.

Prints numbers, asserts nothing. Every figure of the service comes with a
ceiling measured in the same run on the same machine, so a reader compares
ratios rather than raw numbers from different hardware:

- Ceilings: the service's per-action transaction (lock the table row, write
  state and version, append the events, NOTIFY) driven straight from asyncpg
  by N connections, with the NOTIFY inside the transaction, after the commit
  (as the service does), coalesced after the commit, and not at all; and a
  raw grpc.aio unary echo (generic handler, bytes in and out).
- The service under load: greedy bots on many concurrent tables, playing
  through the public API of one game server in its own process: actions/s,
  latency percentiles and the ratio to the asyncpg ceiling; then the same at
  about half of that peak, rate-limited.
- Commit-to-watcher latency: a `Watch` stream per table, timed from the
  action's response to the event's arrival.
- Timeout lateness: tables with short turn timers and nobody playing; each
  fired timeout's event time minus the turn's deadline.
- Memory: server RSS per idle `Watch` stream at 1,000 and 10,000 streams,
  beside a bare grpc.aio server-streaming handler, each in its own process.

Each phase also prints the CPU used by each process (per operation) and by
the rest of the machine: on a small machine the service, its clients and
PostgreSQL share the same cores, so CPU per operation says what limits a
number, and "other processes" says how much a busy machine skewed it.

The database is DATABASE_URL's server when set, else an embedded one; either
way the run creates its own database and drops it at the end. Every server
listens on 127.0.0.1 only and every process it starts is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import platform
import random
import signal
import sys
import threading
import time
import urllib.request
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import grpc
from prometheus_client import start_http_server
from prometheus_client.parser import text_string_to_metric_families

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
from clients.cli.viewstate import state_from_view
from services.common import eventloop
from services.common.auth import issue_service_token, issue_token
from services.common.db import (
    Connection,
    database_name,
)
from services.common.heap import freeze_heap, keep_heap_small
from services.common.limits import Limits
from services.common.logs import configure
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, table_pb2
from services.common.serving import server_options
from services.game import eventlog, statements
from services.game.fanout import CHANNEL
from services.game.rules import serial
from services.game.rules.actions import (
    SYSTEM,
    Action,
    Deal,
    Discard,
    DrawStock,
    LayOff,
    Meld,
    SwapJoker,
    TakeDiscard,
)
from services.game.rules.bots import GreedyBot
from services.game.rules.engine import apply
from services.game.rules.events import Discarded, TurnBegan, TurnPassed
from services.game.rules.ruleset import CAFE, TableOptions
from services.game.rules.state import new_game
from services.game.server import GameConfig, GameServer

TARGETS = {
    "ceiling_ratio": 0.50,
    "half_load_p99_ms": 25.0,
    "timeout_late_p99_ms": 250.0,
    "stream_memory_ratio": 1.25,
}
"""The issue's targets, printed next to each number (never asserted)."""

SECRET = "bench-secret-that-is-long-enough-for-hs256"
LONG_TIMER_MS = 3_600_000
"""Turn timer of the played tables: nothing times out while bots play them."""
SEATS = 4
BARE_SERVICE = "bench.Bare"
STREAM_COUNTS = (1_000, 10_000)

UNLIMITED = Limits(player_rate=0, peer_rate=0, streams_per_player=0)
"""The load comes from a few processes, not from players: no per-peer limit."""


# --- small helpers -----------------------------------------------------------


def ms(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds * 1000:.1f} ms"


@dataclass
class Window:
    """The measured interval; work finishing outside it (warm-up, tail) is not counted."""

    start: float
    end: float

    @classmethod
    def after(cls, warmup: float, seconds: float) -> Window:
        start = time.perf_counter() + warmup
        return cls(start, start + seconds)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def holds(self, t: float) -> bool:
        return self.start <= t < self.end


@dataclass
class Timings:
    window: Window
    latencies: list[float] = field(default_factory=list)

    def add(self, started: float, finished: float) -> None:
        if self.window.holds(finished):
            self.latencies.append(finished - started)

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.window.seconds

    def summary(self) -> str:
        lat = self.latencies
        return f"p50 {ms(pct(lat, 50))}  p99 {ms(pct(lat, 99))}"


# --- processes: CPU and memory from /proc -----------------------------------


def postgres_cpu(database: str) -> dict[str, float]:
    """CPU seconds of the PostgreSQL processes that serve ``database``: its
    backends and their cluster's own processes (WAL writer, checkpointer...),
    not the backends of other databases on the same server."""
    procs: dict[str, tuple[str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if (entry / "comm").read_text().strip() != "postgres":
                continue
            ppid = (entry / "stat").read_text().rpartition(")")[2].split()[1]
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            procs[entry.name] = (ppid, cmd)
    ours = {pid for pid, (_, cmd) in procs.items() if f" {database} " in cmd}
    clusters = {procs[pid][0] for pid in ours}

    def counted(pid: str, ppid: str, cmd: str) -> bool:
        backend = "(" in cmd or "[local]" in cmd
        return pid in ours or pid in clusters or (ppid in clusters and not backend)

    return {pid: cpu_seconds(pid) for pid, (ppid, cmd) in procs.items() if counted(pid, ppid, cmd)}


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class Usage:
    """CPU seconds used over ``wall`` seconds, by process (or group)."""

    wall: float
    used: dict[str, float]
    others: float
    """By everything else on the machine: a busy machine skews every number."""

    def describe(self, ops: int = 0, unit: str = "op") -> str:
        parts = []
        for name, seconds in self.used.items():
            part = f"{name} {seconds / self.wall:.2f}"
            if ops:
                part += f" ({seconds / ops * 1000:.2f} ms/{unit})"
            parts.append(part)
        parts.append(f"other processes {self.others / self.wall:.2f}")
        return f"CPU cores used (of {os.cpu_count()}): " + ", ".join(parts)


class CpuMeter:
    """CPU used over a window by the given processes, this one and PostgreSQL."""

    def __init__(self, database: str, processes: dict[str, int], me: str = "bench clients") -> None:
        self._database = database
        self._processes = processes
        self._me = me
        self._start = self._sample()

    def _sample(self) -> tuple[float, float, dict[str, float], dict[str, float]]:
        mine = {name: cpu_seconds(pid) for name, pid in self._processes.items()}
        mine[self._me] = cpu_seconds("self")
        pg = postgres_cpu(self._database) if self._database else {}
        return time.perf_counter(), machine_busy(), mine, pg

    def stop(self) -> Usage:
        (t0, busy0, mine0, pg0), (t1, busy1, mine1, pg1) = self._start, self._sample()
        used = {name: mine1[name] - mine0[name] for name in mine1}
        if pg1:
            # A backend that ended within the window is missing: a lower bound.
            used["PostgreSQL"] = sum(cpu - pg0.get(pid, 0.0) for pid, cpu in pg1.items())
        return Usage(t1 - t0, used, max(0.0, busy1 - busy0 - sum(used.values())))


async def until(moment: float) -> None:
    """Sleep until `time.perf_counter()` reads ``moment`` (at once if past)."""
    await asyncio.sleep(max(0.0, moment - time.perf_counter()))


async def metered(
    window: Window, database: str, processes: dict[str, int], me: str = "bench clients"
) -> Usage:
    """CpuMeter over ``window``, as a task to run beside the load."""
    await until(window.start)
    cpu = CpuMeter(database, processes, me)
    await until(window.end)
    return cpu.stop()


LAG_BUCKET = "rummy_event_loop_lag_seconds_bucket"


def lag_buckets(metrics_port: int) -> dict[float, float]:
    """The game server's event-loop lag histogram, scraped: bound -> count so far."""
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    return {
        float(sample.labels["le"]): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == LAG_BUCKET
    }


async def loop_lag(window: Window, metrics_port: int) -> str:
    """How late the server's event loop ran its timer over ``window``: a stalled
    loop delays every call in flight at once, so this tells a latency tail
    made in the server's process from one made by the database or clients."""
    try:
        await until(window.start)
        before = await asyncio.to_thread(lag_buckets, metrics_port)
        await until(window.end)
        after = await asyncio.to_thread(lag_buckets, metrics_port)
    except (OSError, ValueError) as error:
        return f"game server event loop: not read ({error})"
    seen = {bound: after[bound] - before.get(bound, 0.0) for bound in sorted(after)}
    ticks = seen.get(math.inf, 0.0)
    if not ticks:
        return "game server event loop: no ticks seen"
    p99 = next(bound for bound, n in seen.items() if n >= 0.99 * ticks)
    late = 1 - seen.get(0.01, 0.0) / ticks
    top = max(bound for bound in seen if bound < math.inf)
    p99_text = f"> {ms(top)}" if p99 == math.inf else f"<= {ms(p99)}"
    return (
        f"game server event loop: {late:.1%} of {ticks:,.0f} ticks late by > 10 ms,"
        f" p99 lag {p99_text}"
    )


# --- server processes --------------------------------------------------------


async def _serve(role: str, dsn: str, port_fd: int) -> None:
    """Child process: run one server until stdin closes or SIGTERM."""
    configure(fmt="json", level="info")  # logging as a production replica's
    async with keep_heap_small():  # and its allocator settings (services/launch.py)
        await _run_server(role, dsn, port_fd)


async def _run_server(role: str, dsn: str, port_fd: int) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def wait_for_parent() -> None:
        sys.stdin.buffer.read()
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=wait_for_parent, daemon=True).start()
    game: GameServer | None = None
    bare: Any = None
    metrics_port = 0
    if role == "game":
        game = GameServer(GameConfig(dsn=dsn, secret=SECRET, limits=UNLIMITED))
        await game.start()
        port = game.port
        metrics_port = start_http_server(0, addr="127.0.0.1")[0].server_port
    else:
        bare = grpc.aio.server(options=server_options())  # the services' own
        bare.add_generic_rpc_handlers((_bare_handler(),))
        port = bare.add_insecure_port("127.0.0.1:0")
        await bare.start()
    os.write(port_fd, f"{port} {metrics_port}\n".encode())
    os.close(port_fd)
    await stop.wait()
    if game is not None:
        await game.stop(0)
    if bare is not None:
        await bare.stop(0)


def _bare_handler() -> Any:
    """A unary echo and a stream that sends one message, then holds: no protobuf."""

    async def echo(request: bytes, _context: Any) -> bytes:
        return request

    async def hold(_request: bytes, _context: Any) -> AsyncIterator[bytes]:
        yield b"\x08\x01" * 32
        await asyncio.get_running_loop().create_future()

    return grpc.method_handlers_generic_handler(
        BARE_SERVICE,
        {
            "Echo": grpc.unary_unary_rpc_method_handler(echo),
            "Hold": grpc.unary_stream_rpc_method_handler(hold),
        },
    )


class Child(common.Child):
    """One server (`game` or `bare`) in its own process; see `bench.common.Child`."""

    def __init__(self, role: str, dsn: str = "") -> None:
        super().__init__("bench.game", role, dsn)

    @property
    def metrics_port(self) -> int:
        """The game server's /metrics (0: none)."""
        return self.ports[1] if len(self.ports) > 1 else 0


# --- the database ------------------------------------------------------------


# --- ceiling (a): the action's transaction straight from asyncpg -----------

# The issue's reference transaction, as the service's locked path writes it
# (`services/game/moves.py`: `_act_locked` -> `services/game/store.py`: `_write`).
LOCK_SQL = (
    "SELECT state, version, last_seq, bot_seats,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms"
    " FROM tables WHERE id = $1 FOR UPDATE"
)
UPDATE_SQL = (
    "UPDATE tables SET state = $2, version = $3, last_seq = $4, turn_deadline = $5,"
    " status = $6, updated_at = now(), finished_at = CASE WHEN $6 = 'finished'"
    " THEN now() END WHERE id = $1"
)
APPEND_SQL = (
    "INSERT INTO table_events (table_id, seq, version, kind, payload)"
    " SELECT $1, s, $3, k, p FROM unnest($2::bigint[], $4::text[], $5::bytea[])"
    " AS e(s, k, p)"
)
NOTIFY_SQL = "SELECT pg_notify($1, $2)"
NOTIFY_MODES = {
    "inside": "NOTIFY inside the transaction",
    "after": "NOTIFY after commit",
    "coalesced": "NOTIFY after commit, coalesced",
    "none": "no NOTIFY (reference)",
    "cas": "the service's: compare-and-set",
}
"""The last is what the service runs for a move on a table the replica knows:
one statement (state if the version is unchanged, events, request answer) and
a coalesced NOTIFY after it; see `services/game/moves.py`. (Each worker reads
its tables once, then keeps their versions, as a replica does.)"""


@dataclass(frozen=True)
class Sample:
    """A real dealt state and real events, so rows have the service's sizes."""

    state: bytes
    kinds: list[str]
    payloads: list[bytes]

    @classmethod
    def make(cls) -> Sample:
        rng = random.Random(7)
        state = new_game(CAFE, SEATS, TableOptions())
        order = list(CAFE.deck.ids())
        rng.shuffle(order)
        state, _ = apply(state, SYSTEM, Deal(tuple(order), 1), 0)
        events = [Discarded(0, order[0]), TurnBegan(1, 2, 45_000)]
        return cls(
            serial.dumps(state),
            [eventlog.kind_of(e) for e in events],
            [eventlog.encode(e) for e in events],
        )


class Coalescer:
    """One connection sends the notifications of many commits in one pg_notify."""

    def __init__(self, con: Connection) -> None:
        self._con = con
        self._items: list[str] = []
        self._wake = asyncio.Event()

    def add(self, item: str) -> None:
        self._items.append(item)
        self._wake.set()

    async def run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            items, self._items = self._items, []
            for i in range(0, len(items), 150):  # a payload stays under 8000 bytes
                await self._con.execute(NOTIFY_SQL, CHANNEL, ",".join(items[i : i + 150]))


async def ceiling_run(
    dsn: str, mode: str, connections: int, warmup: float, seconds: float
) -> tuple[Timings, Usage]:
    sample = Sample.make()
    cons = [await asyncpg.connect(dsn) for _ in range(connections + 2)]
    listener, notifier, workers = cons[0], cons[1], cons[2:]
    # One LISTEN connection, as each game replica has: NOTIFY costs more with listeners.
    await listener.add_listener(CHANNEL, lambda *_args: None)
    per_worker = 4
    ids = [uuid.uuid4() for _ in range(connections * per_worker)]
    await workers[0].executemany(
        "INSERT INTO tables (id, ruleset, state, version, last_seq) VALUES ($1, 'cafe', $2, 1, 0)",
        [(i, sample.state) for i in ids],
    )
    coalescer = Coalescer(notifier)
    coalescing = asyncio.create_task(coalescer.run())
    timings = Timings(Window.after(warmup, seconds))
    metering = asyncio.create_task(metered(timings.window, database_name(dsn), {}, "asyncpg"))
    deadline = datetime.now(UTC) + timedelta(hours=1)

    async def worker(con: Connection, mine: list[uuid.UUID]) -> None:
        i = 0
        known: dict[uuid.UUID, tuple[int, int]] = {}  # last seq and version, as committed
        while time.perf_counter() < timings.window.end:
            table_id = mine[i % len(mine)]
            n = 2 if i % 5 < 2 else 1  # 1.4 events per action, as greedy games log
            i += 1
            started = time.perf_counter()
            if mode == "cas":
                if table_id not in known:
                    row = await con.fetchrow(statements.READ, table_id, "bench", "")
                    assert row is not None
                    known[table_id] = (row["last_seq"], row["version"])
                last, version = known[table_id][0], known[table_id][1] + 1
                moved = await con.fetchval(
                    statements.COMPARE_AND_SET,
                    table_id,
                    sample.state,
                    version,
                    last + n,
                    deadline,
                    datetime.now(UTC),
                    list(range(last + 1, last + n + 1)),
                    sample.kinds[:n],
                    sample.payloads[:n],
                    "bench",
                    "",
                    None,
                )
                assert moved == 1
                known[table_id] = (last + n, version)
                coalescer.add(f"{table_id}:{last + n}")
                timings.add(started, time.perf_counter())
                continue
            async with con.transaction():
                row = await con.fetchrow(LOCK_SQL, table_id)
                assert row is not None
                last, version = row["last_seq"], row["version"] + 1
                await con.execute(
                    UPDATE_SQL, table_id, sample.state, version, last + n, deadline, "active"
                )
                await con.execute(
                    APPEND_SQL,
                    table_id,
                    list(range(last + 1, last + n + 1)),
                    version,
                    sample.kinds[:n],
                    sample.payloads[:n],
                )
                if mode == "inside":
                    await con.execute(NOTIFY_SQL, CHANNEL, f"{table_id}:{last + n}")
            if mode == "after":
                await con.execute(NOTIFY_SQL, CHANNEL, f"{table_id}:{last + n}")
            elif mode == "coalesced":
                coalescer.add(f"{table_id}:{last + n}")
            timings.add(started, time.perf_counter())

    try:
        await asyncio.gather(
            *(
                worker(con, ids[k * per_worker : (k + 1) * per_worker])
                for k, con in enumerate(workers)
            )
        )
        usage = await metering
    finally:
        coalescing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await coalescing
        for con in cons:
            await con.close()
    return timings, usage


async def ceilings(dsn: str, args: argparse.Namespace) -> dict[str, Timings]:
    print(
        f"\n== Ceiling (a): lock-update-append-notify from asyncpg, {args.connections}"
        f" connections, {args.seconds:.0f} s each =="
    )
    results = {}
    for mode, label in NOTIFY_MODES.items():
        t, usage = await ceiling_run(dsn, mode, args.connections, 1.0, args.seconds)
        results[mode] = t
        print(f"  {label:<36} {t.rate:>7,.0f} tx/s   {t.summary()}")
        print(f"  {'':<36} {usage.describe(len(t.latencies), 'tx').partition(': ')[2]}")
    inside, after = results["inside"].rate, results["after"].rate
    print(f"  inside / after commit: {inside / after:.2f}")
    return results


# --- ceiling (b): a raw grpc.aio unary echo ----------------------------------


async def echo_ceiling(args: argparse.Namespace) -> Timings:
    in_flight, channels = 64, 4
    async with Child("bare") as server:
        chans = [channel(server.port, i) for i in range(channels)]
        try:
            calls = [c.unary_unary(f"/{BARE_SERVICE}/Echo") for c in chans]
            timings = Timings(Window.after(1.0, args.seconds))
            payload = b"x" * 64
            metering = asyncio.create_task(
                metered(timings.window, "", {"echo server": server.pid}, "echo clients")
            )

            async def worker(k: int) -> None:
                call = calls[k % channels]
                while time.perf_counter() < timings.window.end:
                    started = time.perf_counter()
                    await call(payload)
                    timings.add(started, time.perf_counter())

            await asyncio.gather(*(worker(k) for k in range(in_flight)))
            usage = await metering
        finally:
            for c in chans:
                await c.close()
    print(
        f"\n== Ceiling (b): grpc.aio unary echo, {in_flight} in flight on {channels}"
        f" connections ==\n  {timings.rate:>7,.0f} calls/s   {timings.summary()}"
        f"\n  {usage.describe(len(timings.latencies), 'call')}"
    )
    return timings


# --- the service under load --------------------------------------------------


@dataclass
class Bot:
    player_id: str
    metadata: tuple[tuple[str, str]]

    @classmethod
    def new(cls) -> Bot:
        player_id = f"bench-{uuid.uuid4().hex[:12]}"
        token = issue_token(player_id, secret=SECRET, now=time.time())
        return cls(player_id, (("authorization", f"Bearer {token}"),))


def service_metadata() -> tuple[tuple[str, str]]:
    token = issue_service_token("matchmaker", secret=SECRET, now=time.time())
    return (("authorization", f"Bearer {token}"),)


async def send(stub: game_pb2_grpc.GameServiceStub, bot: Bot, table_id: str, action: Action) -> Any:
    """One engine action through its RPC; the reply carries `version` and `view`."""
    md = bot.metadata
    match action:
        case DrawStock():
            return await stub.DrawStock(game_pb2.DrawStockRequest(table_id=table_id), metadata=md)
        case TakeDiscard():
            return await stub.TakeDiscard(
                game_pb2.TakeDiscardRequest(table_id=table_id), metadata=md
            )
        case Meld():
            specs = [game_pb2.MeldSpec(card_ids=m.cards) for m in action.melds]
            return await stub.Meld(
                game_pb2.MeldRequest(table_id=table_id, melds=specs), metadata=md
            )
        case LayOff():
            return await stub.LayOff(
                game_pb2.LayOffRequest(
                    table_id=table_id,
                    meld_id=action.meld_id,
                    card_ids=action.cards,
                    side=game_pb2.Side.ValueType(int(action.side)),
                ),
                metadata=md,
            )
        case SwapJoker():
            request = game_pb2.SwapJokerRequest(
                table_id=table_id,
                meld_id=action.meld_id,
                joker_card_id=action.joker,
                replacement_card_ids=[action.replacement],
            )
            if action.lay_off is not None:
                request.lay_off.meld_id = action.lay_off.meld_id
                request.lay_off.card_ids.extend(action.lay_off.cards)
                request.lay_off.side = game_pb2.Side.ValueType(int(action.lay_off.side))
            elif action.new_meld is not None:
                request.new_meld.card_ids.extend(action.new_meld.cards)
            return await stub.SwapJoker(request, metadata=md)
        case Discard():
            return await stub.Discard(
                game_pb2.DiscardRequest(table_id=table_id, card_id=action.card), metadata=md
            )
    raise ValueError(f"no RPC for {action}")


@dataclass
class LoadStats:
    window: Window
    actions: Timings = field(init=False)
    watch: Timings = field(init=False)
    errors: Counter[str] = field(default_factory=Counter)
    games: int = 0
    tables: int = 0
    stalls: int = 0
    reads: int = 0

    def __post_init__(self) -> None:
        self.actions = Timings(self.window)
        self.watch = Timings(self.window)


class Tracker:
    """Pairs each action's response time with its events' arrival on the watchers."""

    def __init__(self, stats: LoadStats) -> None:
        self._stats = stats
        self._responded: dict[int, float] = {}
        self._arrived: dict[int, list[float]] = {}

    def responded(self, version: int, at: float) -> None:
        self._responded[version] = at
        for arrived in self._arrived.pop(version, ()):
            self._stats.watch.add(at, arrived)  # arrived first: a negative latency

    def arrived(self, version: int, at: float) -> None:
        sent = self._responded.get(version)
        if sent is None:
            self._arrived.setdefault(version, []).append(at)
        else:
            self._stats.watch.add(sent, at)


async def watch_table(
    stub: game_pb2_grpc.GameServiceStub, bot: Bot, table_id: str, tracker: Tracker
) -> None:
    call = stub.Watch(game_pb2.WatchRequest(table_id=table_id), metadata=bot.metadata)
    newest = 0
    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
        async for reply in call:
            version = reply.event.version
            if version > newest:  # the first event of each action
                newest = version
                tracker.arrived(version, time.perf_counter())
    call.cancel()


def turn_view(last: table_pb2.TableView, mine: table_pb2.TableView) -> table_pb2.TableView:
    """The current seat's view, from the newest view of the table and its own hand.

    Between two of its turns nothing touches a seat's hand, so a client needs
    no GetTable when the turn comes round: the last reply shows the table.
    """
    if last.my_seat == mine.my_seat:
        return last
    view = table_pb2.TableView()
    view.CopyFrom(last)
    view.my_seat = mine.my_seat
    del view.hand[:]
    view.hand.extend(mine.hand)
    view.ClearField("taken_discard_id")
    return view


async def play_table(
    stub: game_pb2_grpc.GameServiceStub,
    stats: LoadStats,
    *,
    interval: float,
    watchers: int,
    background: set[asyncio.Task[None]],
) -> None:
    """Greedy bots play games on one table after another until the window ends.

    They sit as ordinary players (not `is_bot`, which the server would play
    itself) and play through the public API only."""
    end = stats.window.end
    bot_brain = GreedyBot()
    next_at = time.perf_counter() + random.uniform(0, interval)
    while time.perf_counter() < end:
        bots = [Bot.new() for _ in range(SEATS)]
        reply = await stub.CreateTable(
            game_pb2.CreateTableRequest(
                ruleset="cafe",
                options=table_pb2.TableOptions(turn_timer_ms=LONG_TIMER_MS),
                players=[
                    game_pb2.SeatedPlayer(player_id=b.player_id, display_name="bot") for b in bots
                ],
            ),
            metadata=service_metadata(),
        )
        table_id = reply.table_id
        stats.tables += 1
        tracker = Tracker(stats)
        for w in range(watchers):
            task = asyncio.create_task(watch_table(stub, bots[w % SEATS], table_id, tracker))
            background.add(task)
            task.add_done_callback(background.discard)
        views = {}
        for b in bots:
            view = (
                await stub.GetTable(
                    game_pb2.GetTableRequest(table_id=table_id), metadata=b.metadata
                )
            ).view
            views[view.my_seat] = view
        stats.reads += SEATS
        last = views[0]
        failures = 0
        while last.phase != table_pb2.PHASE_GAME_OVER and time.perf_counter() < end:
            seat = last.current_seat
            action = bot_brain.move(state_from_view(turn_view(last, views[seat])), seat)
            if action is None:
                stats.stalls += 1  # only the clock could move this table on
                break
            if interval:
                now = time.perf_counter()
                next_at = max(next_at + interval, now - interval)
                if next_at > now:
                    await asyncio.sleep(next_at - now)
            started = time.perf_counter()
            try:
                reply = await send(stub, bots[seat], table_id, action)
            except grpc.aio.AioRpcError as error:
                stats.errors[error.code().name] += 1
                failures += 1
                if failures > 3:
                    break
                last = (
                    await stub.GetTable(
                        game_pb2.GetTableRequest(table_id=table_id), metadata=bots[seat].metadata
                    )
                ).view
                views[seat] = last
                stats.reads += 1
                continue
            done = time.perf_counter()
            stats.actions.add(started, done)
            tracker.responded(reply.version, done)
            views[seat] = last = reply.view
        if last.phase == table_pb2.PHASE_GAME_OVER:
            stats.games += 1


async def service_load(
    server: Child, args: argparse.Namespace, rate: float | None, title: str
) -> LoadStats:
    # The bots' process freezes its heap as the servers do (services.common.heap):
    # its own full collections would otherwise stall every call it times.
    freeze_heap()
    stats = LoadStats(Window.after(2.0, args.seconds))
    interval = args.tables / rate if rate else 0.0
    chans = [channel(server.port, i) for i in range(4)]
    background: set[asyncio.Task[None]] = set()
    metering = asyncio.create_task(
        metered(stats.window, database_name(server.dsn), {"game server": server.pid})
    )
    lagging = asyncio.create_task(loop_lag(stats.window, server.metrics_port))
    try:
        stubs = [game_pb2_grpc.GameServiceStub(c) for c in chans]
        await asyncio.gather(
            *(
                play_table(
                    stubs[k % len(stubs)],
                    stats,
                    interval=interval,
                    watchers=args.watchers,
                    background=background,
                )
                for k in range(args.tables)
            )
        )
        usage = await metering
        lag = await lagging
    finally:
        unfinished = [*background, metering, lagging]
        for task in unfinished:
            task.cancel()
        await asyncio.gather(*unfinished, return_exceptions=True)
        for c in chans:
            await c.close()
    a = stats.actions
    print(f"\n== Service: {title} ==")
    print(
        f"  {args.tables} tables x {SEATS} greedy bots, {args.watchers} watcher(s) per table,"
        f" {args.seconds:.0f} s measured"
        + (f", offered {rate:,.0f} actions/s" if rate else ", closed loop")
    )
    print(f"  actions      {a.rate:>7,.0f} /s   {a.summary()}")
    print(f"  to watchers  {stats.watch.summary()}   ({len(stats.watch.latencies):,} events)")
    print(
        f"  {stats.tables} tables started, {stats.games} games finished, {stats.reads} GetTable,"
        f" {stats.stalls} stalled, errors: {dict(stats.errors) or 'none'}"
    )
    print(f"  {usage.describe(len(a.latencies), 'action')}")
    print(f"  {lag}")
    return stats


# --- timeout lateness --------------------------------------------------------


async def timeout_run(
    server: Child, dsn: str, count: int, timer_ms: int, seconds: float
) -> tuple[list[float], int, Usage]:
    """Lateness of every timeout on ``count`` unplayed tables over ``seconds``,
    and how many turns were overdue but not yet fired at the end."""
    chan = channel(server.port)
    try:
        stub = game_pb2_grpc.GameServiceStub(chan)
        md = service_metadata()
        ids: list[str] = []
        cpu = CpuMeter(database_name(dsn), {"game server": server.pid})
        started = time.perf_counter()
        # Spread over one timer period, so deadlines do not all fall together.
        for k in range(count):
            at = started + k * timer_ms / 1000 / count
            await until(at)
            reply = await stub.CreateTable(
                game_pb2.CreateTableRequest(
                    ruleset="cafe",
                    options=table_pb2.TableOptions(turn_timer_ms=timer_ms),
                    players=[
                        game_pb2.SeatedPlayer(player_id=Bot.new().player_id) for _ in range(SEATS)
                    ],
                ),
                metadata=md,
            )
            ids.append(reply.table_id)
        await until(started + seconds)
        usage = cpu.stop()
    finally:
        await chan.close()
    con = await asyncpg.connect(dsn)
    try:
        table_ids = [uuid.UUID(t) for t in ids]
        async with con.transaction():
            now = await con.fetchval("SELECT clock_timestamp()")
            # Nobody plays these: end them so no later server keeps sweeping them.
            await con.execute(
                "UPDATE tables SET status = 'finished', finished_at = now(), turn_deadline = NULL"
                " WHERE id = ANY($1::uuid[])",
                table_ids,
            )
        rows = await con.fetch(
            "SELECT table_id, kind, payload, created_at FROM table_events"
            " WHERE table_id = ANY($1::uuid[]) ORDER BY table_id, seq",
            table_ids,
        )
    finally:
        await con.close()
    late: list[float] = []
    deadline: dict[uuid.UUID, float] = {}
    for r in rows:
        event = eventlog.decode(r["kind"], r["payload"])
        if isinstance(event, TurnBegan):
            deadline[r["table_id"]] = event.deadline_ms / 1000
        elif r["table_id"] in deadline and (
            (isinstance(event, TurnPassed) and event.reason != "left")
            or (isinstance(event, Discarded) and event.automatic)
        ):
            late.append(r["created_at"].timestamp() - deadline.pop(r["table_id"]))
    # Turns overdue at the end count as late as they were then (a lower bound).
    overdue = [now.timestamp() - d for d in deadline.values() if d < now.timestamp()]
    return late + overdue, len(overdue), usage


async def timeouts(server: Child, dsn: str, args: argparse.Namespace) -> list[list[float]]:
    timer_ms, seconds = args.timer_ms, 1.0 + args.seconds
    print(f"\n== Timeouts: {timer_ms} ms turn timers, nobody playing, {seconds:.0f} s ==")
    results = []
    for count in (max(1, args.tables // 5), args.tables):
        late, overdue, usage = await timeout_run(server, dsn, count, timer_ms, seconds)
        results.append(late)
        fired = len(late) - overdue
        p99 = pct(late, 99)
        print(
            f"  {count:>4} tables (due {count * 1000 / timer_ms:,.0f}/s):"
            f" fired {fired / seconds:,.0f}/s,"
            f" {overdue} overdue at the end; lateness p50 {ms(pct(late, 50))}"
            f"  p99 {ms(p99)}  max {ms(max(late, default=math.nan))}"
            f"  [target p99 < {TARGETS['timeout_late_p99_ms']:.0f} ms:"
            f" {verdict(p99 * 1000 < TARGETS['timeout_late_p99_ms'])}]"
        )
        print(f"       {usage.describe(fired, 'timeout')}")
    return results


# --- memory per idle stream --------------------------------------------------


@dataclass
class StreamMemory:
    base: int
    rss: dict[int, int]
    open_seconds: dict[int, float]

    def per_stream(self, n: int) -> float:
        return (self.rss[n] - self.base) / n


async def open_streams(
    opener: Callable[[int], Any], first: int, last: int, batch: int = 500
) -> None:
    """Open streams first..last-1 and read each one's first message."""

    async def one(k: int) -> Any:
        call = opener(k)
        await call.read()
        return call

    for lo in range(first, last, batch):
        await asyncio.gather(*(one(k) for k in range(lo, min(last, lo + batch))))


async def stream_memory(kind: str, dsn: str, channels: int) -> StreamMemory:
    calls: list[Any] = []
    async with Child("game" if kind == "game" else "bare", dsn) as server:
        chans = [channel(server.port, i) for i in range(channels)]
        try:
            if kind == "game":
                opener = await _game_opener(chans, calls)
            else:
                methods = [c.unary_stream(f"/{BARE_SERVICE}/Hold") for c in chans]

                def opener(k: int) -> Any:
                    call = methods[k % channels](b"")
                    calls.append(call)
                    return call

            # Warm up the code paths and allocator, then measure from there.
            await open_streams(opener, 0, 20)
            for call in calls:
                call.cancel()
            calls.clear()
            await asyncio.sleep(0.5)
            base = rss_bytes(server.pid)
            rss: dict[int, int] = {}
            took: dict[int, float] = {}
            opened = 0
            for n in STREAM_COUNTS:
                started = time.perf_counter()
                await open_streams(opener, opened, n)
                took[n] = time.perf_counter() - started
                opened = n
                await asyncio.sleep(0.5)
                rss[n] = rss_bytes(server.pid)
        finally:
            for call in calls:
                call.cancel()
            for c in chans:
                await c.close()
    return StreamMemory(base, rss, took)


async def _game_opener(chans: list[grpc.aio.Channel], calls: list[Any]) -> Callable[[int], Any]:
    """Watch streams spread over 100 idle tables, each resuming one event back."""
    stubs = [game_pb2_grpc.GameServiceStub(c) for c in chans]
    made: list[tuple[str, list[Bot], int]] = []
    for _ in range(100):
        bots = [Bot.new() for _ in range(SEATS)]
        reply = await stubs[0].CreateTable(
            game_pb2.CreateTableRequest(
                ruleset="cafe",
                options=table_pb2.TableOptions(turn_timer_ms=LONG_TIMER_MS),
                players=[game_pb2.SeatedPlayer(player_id=b.player_id) for b in bots],
            ),
            metadata=service_metadata(),
        )
        view = (
            await stubs[0].GetTable(
                game_pb2.GetTableRequest(table_id=reply.table_id), metadata=bots[0].metadata
            )
        ).view
        made.append((reply.table_id, bots, view.last_seq))

    def opener(k: int) -> Any:
        table_id, bots, last_seq = made[k % len(made)]
        call = stubs[k % len(stubs)].Watch(
            game_pb2.WatchRequest(table_id=table_id, after_seq=last_seq - 1),
            metadata=bots[(k // len(made)) % SEATS].metadata,
        )
        calls.append(call)
        return call

    return opener


async def memory(dsn: str, args: argparse.Namespace) -> tuple[StreamMemory, StreamMemory]:
    game = await stream_memory("game", dsn, args.stream_channels)
    bare = await stream_memory("bare", dsn, args.stream_channels)
    print(
        f"\n== Memory: server RSS per idle stream ({args.stream_channels} connections,"
        " servers in their own processes) =="
    )
    for n in STREAM_COUNTS:
        g, b = game.per_stream(n), bare.per_stream(n)
        print(
            f"  {n:>6,} streams: game Watch {g:>8,.0f} B/stream"
            f" (opened in {game.open_seconds[n]:.1f} s),"
            f" bare stream {b:>7,.0f} B/stream, ratio {g / b:.2f}"
        )
    top, limit = STREAM_COUNTS[-1], TARGETS["stream_memory_ratio"]
    ratio = game.per_stream(top) / bare.per_stream(top)
    print(f"  target at {top:,} streams <= {limit:.2f}x: {verdict(ratio <= limit)}")
    return game, bare


# --- the run -----------------------------------------------------------------


async def run(args: argparse.Namespace) -> None:
    began = time.perf_counter()
    async with fresh_database("bench") as (dsn, source):
        print(
            f"Python {platform.python_version()}, grpcio {grpc.__version__},"
            f" asyncpg {asyncpg.__version__}, {os.cpu_count()} CPUs;"
            f" {await server_facts(dsn)} from {source}; {machine_load()}"
        )
        ceiling = await ceilings(dsn, args)
        echo = await echo_ceiling(args)
        async with Child("game", dsn) as server:
            peak = await service_load(server, args, None, "peak (closed loop)")
            ratio = peak.actions.rate / ceiling["after"].rate
            print(
                f"  ratio to the asyncpg ceiling (NOTIFY after commit): {ratio:.2f}"
                f"  [target >= {TARGETS['ceiling_ratio']:.2f}:"
                f" {verdict(ratio >= TARGETS['ceiling_ratio'])}]"
            )
            half_rate = peak.actions.rate / 2
            half = await service_load(server, args, half_rate, "about half of peak (rate-limited)")
            half_p99 = pct(half.actions.latencies, 99)
            print(
                f"  p99 action latency {ms(half_p99)}"
                f"  [target < {TARGETS['half_load_p99_ms']:.0f} ms:"
                f" {verdict(half_p99 * 1000 < TARGETS['half_load_p99_ms'])}]"
            )
            late = await timeouts(server, dsn, args)
        game_mem, bare_mem = await memory(dsn, args)

    same = ceiling["after"].rate
    top = STREAM_COUNTS[-1]
    mem_ratio = game_mem.per_stream(top) / bare_mem.per_stream(top)
    print("\n== Summary against the targets ==")
    print(
        f"  service {peak.actions.rate:,.0f} actions/s vs {same:,.0f} tx/s for the same"
        f" transaction from asyncpg (NOTIFY after commit): {ratio:.2f}"
        f"  [target >= {TARGETS['ceiling_ratio']:.2f}:"
        f" {verdict(ratio >= TARGETS['ceiling_ratio'])}]"
    )
    print(
        f"    (vs NOTIFY inside, {ceiling['inside'].rate:,.0f} tx/s:"
        f" {peak.actions.rate / ceiling['inside'].rate:.2f};"
        f" vs the raw gRPC echo, {echo.rate:,.0f} calls/s: {peak.actions.rate / echo.rate:.2f})"
    )
    print(
        f"    (vs the service's own compare-and-set from asyncpg,"
        f" {ceiling['cas'].rate:,.0f} tx/s: {peak.actions.rate / ceiling['cas'].rate:.2f})"
    )
    print(
        f"  p99 action latency at {half.actions.rate:,.0f} actions/s"
        f" ({half.actions.rate / peak.actions.rate:.0%} of peak): {ms(half_p99)}"
        f"  [target < {TARGETS['half_load_p99_ms']:.0f} ms:"
        f" {verdict(half_p99 * 1000 < TARGETS['half_load_p99_ms'])}]"
    )
    print(
        f"  commit-to-watcher p50 / p99: {ms(pct(half.watch.latencies, 50))} /"
        f" {ms(pct(half.watch.latencies, 99))} at half load,"
        f" {ms(pct(peak.watch.latencies, 50))} / {ms(pct(peak.watch.latencies, 99))} at peak"
    )
    for count, lateness in zip((max(1, args.tables // 5), args.tables), late, strict=True):
        p99 = pct(lateness, 99)
        print(
            f"  timeout lateness p99, {count} tables of {args.timer_ms} ms: {ms(p99)}"
            f"  [target < {TARGETS['timeout_late_p99_ms']:.0f} ms:"
            f" {verdict(p99 * 1000 < TARGETS['timeout_late_p99_ms'])}]"
        )
    print(
        f"  {top:,} idle watchers: {game_mem.per_stream(top):,.0f} B/stream vs bare"
        f" {bare_mem.per_stream(top):,.0f} B/stream: {mem_ratio:.2f}x"
        f"  [target <= {TARGETS['stream_memory_ratio']:.2f}x:"
        f" {verdict(mem_ratio <= TARGETS['stream_memory_ratio'])}]"
    )
    print(f"  total run time {time.perf_counter() - began:.0f} s; {machine_load()}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.game", description=(__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "--seconds", type=float, default=6.0, help="measured seconds of each phase (default 6)"
    )
    parser.add_argument(
        "--tables", type=int, default=100, help="concurrent tables under load (default 100)"
    )
    parser.add_argument(
        "--watchers", type=int, default=1, help="Watch streams per played table (default 1)"
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=16,
        help="asyncpg connections driving the ceiling (default 16)",
    )
    parser.add_argument(
        "--timer-ms", type=int, default=300, help="turn timer of the timeout tables (default 300)"
    )
    parser.add_argument(
        "--stream-channels",
        type=int,
        default=10,
        help="connections carrying the idle streams (default 10)",
    )
    parser.add_argument("--serve", choices=("game", "bare"), help=argparse.SUPPRESS)
    parser.add_argument("--dsn", default="", help=argparse.SUPPRESS)
    parser.add_argument("--port-fd", type=int, default=-1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        eventloop.run(_serve(args.serve, args.dsn, args.port_fd))
        return
    eventloop.run(run(args))


if __name__ == "__main__":
    main()
