"""The ceilings measured in the same run: (a) the matching loop's database work
straight from asyncpg, (b) CreateTables straight against the game service."""

from __future__ import annotations

import asyncio
import time
import uuid

import asyncpg

from bench.common import channel
from bench.matchmaker.settings import OPTIONS, REPLICAS, SECRET
from bench.matchmaker.tickets import split_sizes
from services.common.auth import issue_service_token
from services.common.db import open_pool
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc

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
