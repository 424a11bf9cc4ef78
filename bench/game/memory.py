"""Memory per idle stream: server RSS per idle `Watch` stream, beside a bare
grpc.aio server-streaming handler, each server in its own process."""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from bench.common import channel, verdict
from bench.game.measure import rss_bytes
from bench.game.players import Bot, service_metadata
from bench.game.servers import Child
from bench.game.settings import BARE_SERVICE, LONG_TIMER_MS, SEATS, STREAM_COUNTS, TARGETS
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, table_pb2


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
                methods: list[grpc.aio.UnaryStreamMultiCallable[bytes, bytes]] = [
                    c.unary_stream(f"/{BARE_SERVICE}/Hold") for c in chans
                ]

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
        reply = await tables_pb2_grpc.TableServiceStub(chans[0]).CreateTable(
            tables_pb2.CreateTableRequest(
                ruleset="cafe",
                options=table_pb2.TableOptions(turn_timer_ms=LONG_TIMER_MS),
                players=[tables_pb2.SeatedPlayer(player_id=b.player_id) for b in bots],
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
