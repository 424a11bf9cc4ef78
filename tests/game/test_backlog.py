"""A burst of calls that arrives while a replica's event loop is busy waits its
turn: none is turned away by gRPC's pending-call limits (see
`services.common.serving`). A bare grpc.aio server with gRPC's defaults, put
through the same burst, shows what would happen otherwise."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from services.game.server import GameServer

from .harness import address

BURST = 4_000
"""More than gRPC's default hard limit of 3,000 calls waiting to be taken up."""


async def burst_while_busy(target: str) -> Counter[str]:
    """BURST health checks sent from another thread while this event loop (the
    server's) is blocked; how each ended, by status code."""
    results: Counter[str] = Counter()
    sent = threading.Event()

    def client() -> None:
        with grpc.insecure_channel(target) as channel:
            check = health_pb2_grpc.HealthStub(channel).Check
            request = health_pb2.HealthCheckRequest()
            calls = [check.future(request, timeout=60) for _ in range(BURST)]
            sent.set()
            for call in calls:
                try:
                    call.result()
                    results["OK"] += 1
                except grpc.RpcError as error:
                    results[error.code().name] += 1

    thread = threading.Thread(target=client, daemon=True)
    thread.start()
    # Blocking on purpose: the server's loop takes up no call until every call of
    # the burst has been sent and has had time to reach the server, a loaded
    # machine included.
    assert sent.wait(30)
    time.sleep(3.0)
    await asyncio.to_thread(thread.join, 90)
    assert not thread.is_alive()
    return results


async def test_a_burst_arriving_while_the_replica_is_busy_is_served_in_full(
    server: GameServer,
) -> None:
    results = await burst_while_busy(address(server))
    assert results == Counter({"OK": BURST})


async def test_with_grpc_defaults_the_same_burst_is_partly_turned_away() -> None:
    bare = grpc.aio.server()
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), bare)
    port = bare.add_insecure_port("127.0.0.1:0")
    await bare.start()
    try:
        results = await burst_while_busy(f"127.0.0.1:{port}")
    finally:
        await bare.stop(0)
    assert results["OK"] < BURST
    assert results["OK"] + results["CANCELLED"] == BURST
