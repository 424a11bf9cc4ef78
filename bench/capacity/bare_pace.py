"""The bare server at the players' pace, in a load process: as many connections
as the step's players, each with one stream, grouped four to a "table"; an
action is one unary `Act` call on a member's connection, which the bare server
answers and follows with a message on each of the group's four streams (a move,
and its event to the table's watchers). What gRPC alone costs at that pace."""

from __future__ import annotations

import asyncio
import os
import random
import time
from typing import Any

import grpc

from bench.capacity.settings import OPEN_BATCH, SEATS
from bench.common import pct
from bench.game.settings import BARE_SERVICE


class BarePace:
    def __init__(self, channel_for: Any) -> None:
        self._channel_for = channel_for
        self._chans: list[grpc.aio.Channel] = []
        self._calls: list[Any] = []
        self._readers: list[asyncio.Task[None]] = []
        self.received = 0

    async def open(self, target: str, count: int) -> dict[str, Any]:
        """``count`` connections, each holding a stream in its group of `SEATS`."""
        prefix = f"{os.getpid()}:"

        async def one(i: int) -> None:
            chan = self._channel_for(target, i)
            hold = chan.unary_stream(f"/{BARE_SERVICE}/Hold")
            call = hold(f"{prefix}{i // SEATS}".encode(), wait_for_ready=True)
            await call.read()
            self._chans.append(chan)
            self._calls.append(call)
            self._readers.append(asyncio.create_task(self._read(call)))

        for lo in range(0, count, OPEN_BATCH):
            await asyncio.gather(*(one(i) for i in range(lo, min(count, lo + OPEN_BATCH))))
        return {"opened": len(self._chans)}

    async def _read(self, call: Any) -> None:
        while await call.read() is not grpc.aio.EOF:
            self.received += 1

    async def run(self, rate: float, seconds: float) -> dict[str, Any]:
        """Actions at ``rate`` per second for ``seconds``, each on a group picked at
        random, from one of its members' connections."""
        if not self._chans or rate <= 0:
            return {"acts": 0, "received": 0, "errors": 0, "p99_s": float("nan")}
        prefix = f"{os.getpid()}:"
        groups = -(-len(self._chans) // SEATS)
        acts: list[Any] = [c.unary_unary(f"/{BARE_SERVICE}/Act") for c in self._chans]
        pick = random.Random(0)
        latencies: list[float] = []
        errors = 0
        received = self.received

        async def act(group: int) -> None:
            nonlocal errors
            member = min(len(acts) - 1, group * SEATS + pick.randrange(SEATS))
            started = time.perf_counter()
            try:
                await acts[member](f"{prefix}{group}".encode())
            except grpc.aio.AioRpcError:
                errors += 1
                return
            latencies.append(time.perf_counter() - started)

        began = time.perf_counter()
        pending: set[asyncio.Task[None]] = set()
        n = 0
        while (due := began + n / rate) < began + seconds:
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            task = asyncio.create_task(act(pick.randrange(groups)))
            pending.add(task)
            task.add_done_callback(pending.discard)
            n += 1
        await asyncio.gather(*pending)
        await asyncio.sleep(0.2)  # the last messages on their way
        return {
            "acts": n,
            "received": self.received - received,
            "errors": errors,
            "p99_s": pct(latencies, 99),
        }

    async def close(self) -> dict[str, Any]:
        for task in self._readers:
            task.cancel()
        for call in self._calls:
            call.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
        await asyncio.gather(*(c.close() for c in self._chans), return_exceptions=True)
        self._chans.clear()
        self._calls.clear()
        self._readers.clear()
        return {"opened": 0}
