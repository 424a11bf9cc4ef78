"""The ceilings the service is compared with, measured in the same run: (a) the
action's transaction driven straight from asyncpg, (b) a raw grpc.aio unary echo,
(c) an action's gRPC work alone: the call and its event to the table's watchers."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg
import grpc

from bench.common import channel
from bench.game.measure import Timings, Usage, Window, metered
from bench.game.servers import Child
from bench.game.settings import BARE_SERVICE, SEATS
from services.common.db import Connection, database_name
from services.game import eventlog, statements
from services.game.notices import CHANNEL
from services.game.rules import serial
from services.game.rules.actions import SYSTEM, Deal
from services.game.rules.engine import apply
from services.game.rules.events import Discarded, TurnBegan
from services.game.rules.ruleset import CAFE, TableOptions
from services.game.rules.state import new_game

# --- ceiling (a): the action's transaction straight from asyncpg -----------

# The reference transaction: the table's row locked, then written. The
# service itself commits by compare-and-set (`services/game/store.py`: `commit`),
# measured as the last mode ("cas").
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
a coalesced NOTIFY after it; see `services/game/store.py`. (Each worker reads
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
                    row = await statements.READ.fetchrow(
                        con, table_id=table_id, player_id="bench", request_id=""
                    )
                    assert row is not None
                    known[table_id] = (row["last_seq"], row["version"])
                last, version = known[table_id][0], known[table_id][1] + 1
                moved = await statements.WRITE.fetchval(
                    con,
                    table_id=table_id,
                    state=sample.state,
                    version=version,
                    last_seq=last + n,
                    turn_deadline=deadline,
                    status="active",
                    at=datetime.now(UTC),
                    seqs=list(range(last + 1, last + n + 1)),
                    kinds=sample.kinds[:n],
                    payloads=sample.payloads[:n],
                    player_id="bench",
                    request_id="",
                    answer=None,
                    digest=None,
                    gone=[],  # no seat left
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


async def echo_ceiling(
    args: argparse.Namespace, title: str = "Ceiling (b)"
) -> tuple[Timings, Usage]:
    """Calls/s of a bare grpc.aio unary echo, and the CPU its server spent on them."""
    in_flight, channels = 64, 4
    async with Child("bare") as server:
        chans = [channel(server.port, i) for i in range(channels)]
        try:
            calls: list[grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]] = [
                c.unary_unary(f"/{BARE_SERVICE}/Echo") for c in chans
            ]
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
        f"\n== {title}: grpc.aio unary echo, {in_flight} in flight on {channels}"
        f" connections ==\n  {timings.rate:>7,.0f} calls/s   {timings.summary()}"
        f"\n  {usage.describe(len(timings.latencies), 'call')}"
    )
    return timings, usage


# --- ceiling (c): an action's gRPC work alone ---------------------------------


async def act_ceiling(args: argparse.Namespace) -> tuple[Timings, Usage]:
    """A bare grpc.aio server's `Act` in a closed loop, one caller per table as at
    the service's peak: a unary call that also sends one message on each of its
    table's ``--watchers`` streams (what a move and its event are on the wire),
    and the CPU that server spent on them."""
    channels = 4
    async with Child("bare") as server:
        chans = [channel(server.port, i) for i in range(channels)]
        readers: list[asyncio.Task[None]] = []
        try:
            calls: list[grpc.aio.UnaryUnaryMultiCallable[bytes, bytes]] = [
                c.unary_unary(f"/{BARE_SERVICE}/Act") for c in chans
            ]
            streams: list[grpc.aio.UnaryStreamMultiCallable[bytes, bytes]] = [
                c.unary_stream(f"/{BARE_SERVICE}/Hold") for c in chans
            ]
            groups = [f"act-{t}".encode() for t in range(args.tables)]
            for t, group in enumerate(groups):
                for w in range(args.watchers):
                    hold = streams[(t + w) % channels](group)
                    await hold.read()  # joined its group before any Act
                    readers.append(asyncio.create_task(_drain(hold)))
            timings = Timings(Window.after(1.0, args.seconds))
            metering = asyncio.create_task(
                metered(timings.window, "", {"bare server": server.pid}, "bare clients")
            )

            async def worker(t: int) -> None:
                call, group = calls[t % channels], groups[t]
                while time.perf_counter() < timings.window.end:
                    started = time.perf_counter()
                    await call(group)
                    timings.add(started, time.perf_counter())

            await asyncio.gather(*(worker(t) for t in range(args.tables)))
            usage = await metering
        finally:
            for task in readers:
                task.cancel()
            for c in chans:
                await c.close()
    print(
        f"\n== Ceiling (c): grpc.aio unary Act and a message to each of its table's"
        f" {args.watchers} watch stream(s), {args.tables} tables in a closed loop ==\n"
        f"  {timings.rate:>7,.0f} actions/s   {timings.summary()}"
        f"\n  {usage.describe(len(timings.latencies), 'action')}"
    )
    return timings, usage


async def _drain(call: grpc.aio.UnaryStreamCall[bytes, bytes]) -> None:
    with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
        while await call.read() is not grpc.aio.EOF:
            pass
