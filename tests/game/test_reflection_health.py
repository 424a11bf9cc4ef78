"""Tools like grpcurl work without proto files: the services are listed and
described through gRPC reflection, and the standard health check answers."""

from __future__ import annotations

import asyncio

import grpc
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from services.common.pb.rummy.v1 import table_pb2
from services.game.server import GameServer

from .harness import CALL_TIMEOUT_S, address, refused

SERVICES = {"rummy.v1.GameService", "rummy.v1.AuthService"}
BESIDE = {"rummy.admin.v1.TableAdminService", "rummy.internal.v1.TableService"}
"""Served on the same port for the operators and the other services: listed too,
though health speaks for the public services alone."""


async def test_reflection_lists_and_describes_the_services(
    channel: grpc.aio.Channel, server: GameServer
) -> None:
    # The raw reflection stream, with no token: what grpcurl sends first.
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    call = stub.ServerReflectionInfo(timeout=CALL_TIMEOUT_S)
    await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
    reply = await call.read()
    await call.done_writing()
    names = {s.name for s in reply.list_services_response.service}
    assert names >= {*SERVICES, *BESIDE, "grpc.health.v1.Health"}

    # grpc_reflection's descriptor database is synchronous: run it off the loop that
    # serves it. It rebuilds the API from the server alone.
    def describe() -> tuple[set[str], bool, set[str], str]:
        with grpc.insecure_channel(address(server)) as sync_channel:
            db = ProtoReflectionDescriptorDatabase(sync_channel)
            listed = set(db.get_services())
            pool = DescriptorPool(db)
            game = pool.FindServiceByName("rummy.v1.GameService")
            watch = game.methods_by_name["Watch"]
            event = pool.FindMessageTypeByName("rummy.v1.TableEvent")
            tables = pool.FindServiceByName("rummy.internal.v1.TableService")
            one = tables.methods_by_name["CreateTables"].input_type.fields_by_name["tables"]
            options = one.message_type.fields_by_name["options"].message_type
            return listed, watch.server_streaming, set(event.fields_by_name), options.full_name

    listed, streaming, fields, options = await asyncio.to_thread(describe)
    assert listed >= SERVICES | BESIDE
    assert options == "rummy.v1.TableOptions"
    assert streaming
    assert fields == set(table_pb2.TableEvent.DESCRIPTOR.fields_by_name)


async def test_health_check_says_serving(channel: grpc.aio.Channel) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    for name in ("", *SERVICES):
        reply = await stub.Check(
            health_pb2.HealthCheckRequest(service=name), timeout=CALL_TIMEOUT_S
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING, name
    unknown = stub.Check(health_pb2.HealthCheckRequest(service="rummy.v1.NoSuchService"))
    assert (await refused(unknown))[0] == grpc.StatusCode.NOT_FOUND


async def test_health_watch_sees_the_server_leave(
    channel: grpc.aio.Channel, server: GameServer
) -> None:
    stub = health_pb2_grpc.HealthStub(channel)
    watch = stub.Watch(health_pb2.HealthCheckRequest(service="rummy.v1.GameService"))
    assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
    stopping = asyncio.create_task(server.stop(1))
    # A load balancer watching health sees the replica leave before it goes.
    async with asyncio.timeout(CALL_TIMEOUT_S):
        assert (await watch.read()).status == health_pb2.HealthCheckResponse.NOT_SERVING
    await stopping
