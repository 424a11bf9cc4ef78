"""Timeout lateness: tables with short turn timers and nobody playing; each
fired timeout's event time minus the turn's deadline."""

from __future__ import annotations

import argparse
import math
import time
import uuid

import asyncpg

from bench.common import channel, pct, verdict
from bench.game.measure import CpuMeter, Usage, ms, until
from bench.game.players import Bot, service_metadata
from bench.game.servers import Child
from bench.game.settings import SEATS, TARGETS
from services.common.db import database_name
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.game import eventlog
from services.game.rules.events import Discarded, TurnBegan, TurnPassed


async def timeout_run(
    server: Child, dsn: str, count: int, timer_ms: int, seconds: float
) -> tuple[list[float], int, Usage]:
    """Lateness of every timeout on ``count`` unplayed tables over ``seconds``,
    and how many turns were overdue but not yet fired at the end."""
    chan = channel(server.port)
    try:
        stub = tables_pb2_grpc.TableServiceStub(chan)
        md = service_metadata()
        ids: list[str] = []
        cpu = CpuMeter(database_name(dsn), {"game server": server.pid})
        started = time.perf_counter()
        # Spread over one timer period, so deadlines do not all fall together.
        for k in range(count):
            at = started + k * timer_ms / 1000 / count
            await until(at)
            reply = await stub.CreateTable(
                tables_pb2.CreateTableRequest(
                    ruleset="cafe",
                    options=table_pb2.TableOptions(turn_timer_ms=timer_ms),
                    players=[
                        tables_pb2.SeatedPlayer(player_id=Bot.new().player_id) for _ in range(SEATS)
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
