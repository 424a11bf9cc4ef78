"""Clients that cancel their streams at any moment, while the server writes to
them: each such stream ends CANCELLED in `rummy_rpc_requests_total`, never
INTERNAL, and nothing is logged as a fault.

The clients read slowly: their channel gives a stream almost no flow-control
window and they stop reading after a message or two, so the server's next write
waits on them; most cancellations then land on a write in flight, the moment
grpc.aio fails that write before it tells the handler of the cancellation."""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest
from structlog.testing import capture_logs

from services.common import interceptors
from services.common.metrics import RPC_REQUESTS
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker import streams
from tests.game.harness import address, create_table, login, start_server
from tests.matchmaker.harness import backend, on, players, stub

STREAMS = 300
"""Streams of each kind cancelled by their clients."""
AT_ONCE = 60
"""Streams open at a time."""
CANCEL_WITHIN_S = 0.3
"""Each stream is cancelled at a random moment this soon after its last read."""
SLOW_READER = [("grpc.http2.lookahead_bytes", 64), ("grpc.http2.bdp_probe", 0)]
"""A channel whose streams take a few dozen bytes before the client reads more."""


def rpc_codes(service: str, method: str) -> Counter[str]:
    """`rummy_rpc_requests_total` of one method, by code, so far in this process."""
    counts: Counter[str] = Counter()
    for metric in RPC_REQUESTS.collect():
        for sample in metric.samples:
            labels = sample.labels
            if (
                sample.name.endswith("_total")
                and (labels["service"], labels["method"]) == (service, method)
                and sample.value
            ):
                counts[labels["code"]] = int(sample.value)
    return counts


class Handled:
    """The calls of one method that reached the server's handler from now on,
    and how the server counted those that ended."""

    def __init__(self, service: str, method: str, monkeypatch: pytest.MonkeyPatch) -> None:
        self._service, self.method = service, method
        self._before = rpc_codes(service, method)
        self.entered = 0
        enter = interceptors._Call.enter

        async def counted(call: Any, *args: Any) -> None:
            if (call.service, call.method) == (service, method):
                self.entered += 1
            await enter(call, *args)

        monkeypatch.setattr(interceptors._Call, "enter", counted)

    def counted(self) -> Counter[str]:
        now = rpc_codes(self._service, self.method)
        now.subtract(self._before)
        return +now

    async def all_ended(self) -> None:
        """Every call that reached its handler has ended and been counted (the
        server may stop now without ending any itself)."""
        async with asyncio.timeout(30):
            while self.counted().total() < self.entered:
                await asyncio.sleep(0.02)


@asynccontextmanager
async def slow_reader(port: int) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=SLOW_READER) as channel:
        yield channel


async def cancel_at_random(call: Any, rng: random.Random) -> bool:
    """Read none, one or two messages, then cancel the stream while the server
    writes on; whether a message was read (the handler surely ran)."""
    read = False
    for _ in range(rng.randrange(3)):
        if await asyncio.wait_for(call.read(), 30) is grpc.aio.EOF:
            break
        read = True
    await asyncio.sleep(rng.uniform(0, CANCEL_WITHIN_S))
    call.cancel()
    return read


async def cancelled_streams(
    open_stream: Callable[[int], Any], handled: Handled, rng: random.Random
) -> int:
    """STREAMS streams, AT_ONCE at a time, each cancelled at random, until every
    handler has ended; how many reached their handler for sure."""
    slots = asyncio.Semaphore(AT_ONCE)

    async def one(i: int) -> bool:
        async with slots:
            return await cancel_at_random(open_stream(i), rng)

    reached = sum(await asyncio.gather(*(one(i) for i in range(STREAMS))))
    await handled.all_ended()
    return reached


def check(
    handled: Handled, reached: int, logs: list[Any], caplog: pytest.LogCaptureFixture
) -> None:
    counted = handled.counted()
    faults = [e["event"] for e in logs if e["log_level"] in ("error", "critical")]
    faults += [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    print(
        f"{handled.method}: {STREAMS} streams cancelled, {handled.entered} reached their handler"
        f" ({reached} after a message); counted {dict(counted)}; {len(faults)} faults logged"
    )
    # Those cancelled before their handler ran are counted nowhere.
    assert reached <= handled.entered <= STREAMS
    assert counted == Counter(CANCELLED=handled.entered), counted
    assert not faults, faults[:3]


async def test_enqueue_streams_cancelled_mid_write_are_counted_cancelled(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A progress message every millisecond: the server writes all the time.
    monkeypatch.setattr(streams, "PROGRESS_EVERY_S", 0.001)
    monkeypatch.setattr(streams, "PROGRESS_PER_S", 10**9)
    caplog.set_level(logging.WARNING)
    rng = random.Random(27)
    async with backend(fresh_dsn, matching=False) as b:  # every ticket waits
        people = await players(b.channel(), STREAMS)
        handled = Handled("MatchmakerService", "Enqueue", monkeypatch)
        async with slow_reader(b.matchmakers[0].port) as channel:

            def enqueue(i: int) -> Any:
                player = on(people[i], channel)
                request = mm.EnqueueRequest(table_size=4)
                return stub(player).Enqueue(request, metadata=player.auth)

            with capture_logs() as logs:
                reached = await cancelled_streams(enqueue, handled, rng)
    check(handled, reached, logs, caplog)


async def test_watch_streams_cancelled_mid_write_are_counted_cancelled(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    rng = random.Random(27)
    server = await start_server(fresh_dsn)
    try:
        async with grpc.aio.insecure_channel(address(server)) as plain:
            seated = [await login(plain, f"W{i}") for i in range(2)]
            table_id = await create_table(plain, seated)
        handled = Handled("GameService", "Watch", monkeypatch)
        async with slow_reader(server.port) as channel:

            def watch(i: int) -> Any:
                request = game_pb2.WatchRequest(table_id=table_id)
                return game_pb2_grpc.GameServiceStub(channel).Watch(
                    request, metadata=seated[i % 2].auth
                )

            with capture_logs() as logs:
                reached = await cancelled_streams(watch, handled, rng)
    finally:
        await server.stop(0)
    check(handled, reached, logs, caplog)
