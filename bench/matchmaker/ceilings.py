"""The ceilings measured in the same run: (a) the matching loop's database work
straight from asyncpg, (b) CreateTables straight against the game service, (c)
Enqueue's stream from a bare grpc.aio server: the floor of a ticket's gRPC work."""

from __future__ import annotations

import asyncio
import json
import os
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import asyncpg

from bench.common import channel, cpu_seconds
from bench.matchmaker.settings import OPTIONS, REPLICAS, SECRET
from bench.matchmaker.tickets import split_sizes
from services.common.auth import issue_service_token
from services.common.db import open_pool
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import matchmaker_pb2_grpc
from services.matchmaker.messages import match_message, ticket_message
from services.matchmaker.request_checks import effective_options
from services.matchmaker.tickets import TicketRow

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
    stubs = [tables_pb2_grpc.TableServiceStub(c) for c in chans]
    gate = asyncio.Semaphore(in_flight)
    seats = 0

    def request(i: int) -> tables_pb2.CreateTableRequest:
        nonlocal seats
        size = (2, 3, 4)[i % 3]
        seats += size
        return tables_pb2.CreateTableRequest(
            table_id=str(uuid.uuid4()),
            ruleset="cafe",
            options=OPTIONS,
            players=[
                tables_pb2.SeatedPlayer(player_id=f"ceil-{i}-{s}", display_name=f"C{s}")
                for s in range(size)
            ],
        )

    async def batch(k: int, first: int) -> None:
        calls = tables_pb2.CreateTablesRequest(
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


# --- ceiling (c): Enqueue's stream from a bare grpc.aio server ----------------


def sample_messages() -> tuple[mm.Ticket, mm.Match]:
    """A queued ticket and its match as the matchmaker writes them."""
    now = datetime.now(UTC)
    options = json.dumps(effective_options("cafe", OPTIONS))
    row = TicketRow(
        uuid.uuid4(),
        "bench-00001",
        4,
        "cafe",
        options,
        "queued",
        None,
        uuid.uuid4(),
        2,
        4,
        "",
        now,
        now + timedelta(hours=1),
        f"cafe|fifo|{options}",
        "normal",
    )
    target = "127.0.0.1:50051"
    return ticket_message(row, game_target=target), match_message(row, game_target=target)


@dataclass(frozen=True)
class StreamFloor:
    """Enqueue's gRPC work alone: what the bare server and the clients spent."""

    rate: float
    """Streams/s the bare server served (its streams hold `BARE_HOLD_S`)."""
    server_ms: float
    """Server CPU per stream."""
    clients_ms: float
    """This process's CPU per stream: the clients' side of the same streams."""

    def cap(self) -> float:
        """Tickets/s this machine's cores could carry with gRPC's work alone, the
        server's and the clients' (nothing else running: no database, no game)."""
        return (os.cpu_count() or 1) * 1000 / (self.server_ms + self.clients_ms)


async def stream_ceiling(port: int, pid: int, count: int, channels: int) -> StreamFloor:
    """Enqueue against a bare server (`servers._bare_enqueue`): its three
    messages, up to 1,024 streams open."""
    chans = [channel(port, i) for i in range(channels)]
    stubs = [matchmaker_pb2_grpc.MatchmakerServiceStub(c) for c in chans]
    request = mm.EnqueueRequest(table_size=4, ruleset="cafe", options=OPTIONS)
    gate = asyncio.Semaphore(1_024)

    async def one(i: int) -> None:
        async with gate:
            got = [m async for m in stubs[i % channels].Enqueue(request, timeout=60)]
        assert got[-1].HasField("match"), got

    server, clients = cpu_seconds(pid), cpu_seconds("self")
    started = time.perf_counter()
    try:
        await asyncio.gather(*(one(i) for i in range(count)))
    finally:
        for c in chans:
            await c.close()
    elapsed = time.perf_counter() - started
    return StreamFloor(
        count / elapsed,
        (cpu_seconds(pid) - server) * 1000 / count,
        (cpu_seconds("self") - clients) * 1000 / count,
    )
