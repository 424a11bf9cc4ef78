"""Health and reflection are open to all, and their calls are never rate-limited
(probes must always get through), but their streams count: by connection, and
toward the replica's total. When the server stops they end at once."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from services.common.errors import error_info
from services.common.limits import Limits
from tests.game.harness import WAIT_S, address, start_server

from .test_limits import SLOW, game, own_connection

SERVING = health_pb2.HealthCheckResponse.SERVING


async def health_watch(channel: grpc.aio.Channel) -> Any:
    call = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
    first = await asyncio.wait_for(call.read(), WAIT_S)
    assert first.status == SERVING
    return call


async def refused(call: Any) -> str | None:
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await asyncio.wait_for(call.read(), WAIT_S)
    assert failure.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED, failure.value
    info = error_info(failure.value)
    return info.reason if info else None


async def test_health_and_reflection_streams_count_but_probes_are_never_limited(
    fresh_dsn: str,
) -> None:
    limits = Limits(streams_per_player=2, streams_per_replica=3, peer_rate=SLOW, peer_burst=1)
    async with (
        game(fresh_dsn, limits) as server,
        own_connection(server) as channel,
        own_connection(server) as other,
    ):
        health = health_pb2_grpc.HealthStub(channel)
        for _ in range(5):  # past the connection's rate: probes still get through
            reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=WAIT_S)
            assert reply.status == SERVING

        watches = [await health_watch(channel) for _ in range(2)]
        one_too_many = health.Watch(health_pb2.HealthCheckRequest(service=""))
        assert await refused(one_too_many) == "TOO_MANY_STREAMS"

        reflecting = reflection_pb2_grpc.ServerReflectionStub(other).ServerReflectionInfo()
        await reflecting.write(reflection_pb2.ServerReflectionRequest(list_services=""))
        listed = await asyncio.wait_for(reflecting.read(), WAIT_S)
        assert listed.list_services_response.service
        # Three streams open on the replica: its total.
        assert (
            await refused(
                health_pb2_grpc.HealthStub(other).Watch(health_pb2.HealthCheckRequest(service=""))
            )
            == "SERVER_FULL"
        )
        for call in (*watches, reflecting):
            call.cancel()


async def test_health_watchers_end_at_once_when_the_server_stops(fresh_dsn: str) -> None:
    server = await start_server(fresh_dsn)
    stopping = None
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            call = await health_watch(channel)
            stopping = asyncio.create_task(server.stop(WAIT_S * 2))
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                async with asyncio.timeout(WAIT_S):  # well within the grace period
                    while True:
                        reply = await call.read()
                        assert reply is not grpc.aio.EOF
            info = error_info(ended.value)
            assert ended.value.code() is grpc.StatusCode.UNAVAILABLE, ended.value
            assert info is not None and info.reason == "SERVER_STOPPING"
    finally:
        await (stopping if stopping is not None else server.stop(0))
