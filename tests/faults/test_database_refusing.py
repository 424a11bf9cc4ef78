"""A database that refuses connections (ALTER DATABASE … ALLOW_CONNECTIONS false:
SQLSTATE 55000, the family of a database dropped, renamed or in recovery) is an
outage like any other: every call answers UNAVAILABLE with DATABASE_UNAVAILABLE,
health turns NOT_SERVING, and the service comes back once it is allowed again.
Before, each of these calls answered INTERNAL with a traceback in the log."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.errors import error_info
from services.common.pb.rummy.v1 import (
    auth_pb2,
    auth_pb2_grpc,
    game_pb2,
    game_pb2_grpc,
    matchmaker_pb2_grpc,
)
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from tests.cli.harness import seat_with_a_bot, servers, sign_in

CALL_S = 15.0


async def _admin(database_url: str, statement: str) -> None:
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


async def refuse_connections(database_url: str, name: str, *, out: bool) -> None:
    """Let nobody in (and end every session): 55000; or let them in again."""
    allow = "false" if out else "true"
    await _admin(database_url, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {allow}')
    if out:
        await _admin(
            database_url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE datname = '{name}' AND pid <> pg_backend_pid()",
        )


async def rename(database_url: str, name: str, *, out: bool) -> None:
    """The database renamed under the servers (3D000: it no longer exists for
    them), or given its name back."""
    gone = f"{name}_away"
    if out:
        await refuse_connections(database_url, name, out=True)
        await _admin(database_url, f'ALTER DATABASE "{name}" RENAME TO "{gone}"')
        await _admin(database_url, f'ALTER DATABASE "{gone}" ALLOW_CONNECTIONS true')
    else:
        await refuse_connections(database_url, gone, out=True)
        await _admin(database_url, f'ALTER DATABASE "{gone}" RENAME TO "{name}"')
        await refuse_connections(database_url, name, out=False)


OUTAGES = {"refusing-connections": refuse_connections, "renamed": rename}


async def unavailable(call: Callable[[], Awaitable[Any]]) -> tuple[grpc.StatusCode, str]:
    """How a call (or a stream's first message) failed: code and ErrorInfo reason."""
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await asyncio.wait_for(call(), CALL_S)
    info = error_info(failure.value)
    return failure.value.code(), info.reason if info is not None else ""


async def first(stream: Any) -> Any:
    async for message in stream:
        return message
    return None


@pytest.mark.parametrize("outage", sorted(OUTAGES))
async def test_a_database_out_of_reach_is_unavailable_everywhere(
    fresh_dsn: str, database_url: str, tmp_path: Path, outage: str
) -> None:
    """SQLSTATE 55000 (no connections allowed) and 3D000 (the database is gone)."""
    start = OUTAGES[outage]
    name = urlsplit(fresh_dsn).path.lstrip("/")
    async with servers(fresh_dsn) as running:
        table_id = await seat_with_a_bot(running, tmp_path, "cafe")
        ana = await sign_in(running, "device-refused-0001", "Ana")
        auth = (("authorization", f"Bearer {ana.token}"),)
        async with (
            grpc.aio.insecure_channel(running.game_address) as game_channel,
            grpc.aio.insecure_channel(running.address) as mm_channel,
        ):
            game = game_pb2_grpc.GameServiceStub(game_channel)
            queue = matchmaker_pb2_grpc.MatchmakerServiceStub(mm_channel)
            login = auth_pb2_grpc.AuthServiceStub(mm_channel)
            await start(database_url, name, out=True)
            try:
                calls: dict[str, Callable[[], Awaitable[Any]]] = {
                    "Login": lambda: login.Login(
                        auth_pb2.LoginRequest(device_id="device-refused-0002", display_name="Bo")
                    ),
                    "GetTable": lambda: game.GetTable(
                        game_pb2.GetTableRequest(table_id=table_id), metadata=auth
                    ),
                    "DrawStock": lambda: game.DrawStock(
                        game_pb2.DrawStockRequest(table_id=table_id, request_id="r-1"),
                        metadata=auth,
                    ),
                    "Watch": lambda: first(
                        game.Watch(game_pb2.WatchRequest(table_id=table_id), metadata=auth)
                    ),
                    "GetTicket": lambda: queue.GetTicket(
                        mm.GetTicketRequest(ticket_id=str(uuid.uuid4())), metadata=auth
                    ),
                    "Enqueue": lambda: first(
                        queue.Enqueue(
                            mm.EnqueueRequest(table_size=2, ruleset="cafe"), metadata=auth
                        )
                    ),
                }
                for method, call in calls.items():
                    got = await unavailable(call)
                    assert got == (grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE"), method
                for channel in (game_channel, mm_channel):
                    health = health_pb2_grpc.HealthStub(channel)
                    deadline = time.monotonic() + CALL_S
                    while True:
                        reply = await health.Check(health_pb2.HealthCheckRequest(service=""))
                        if reply.status == health_pb2.HealthCheckResponse.NOT_SERVING:
                            break
                        assert time.monotonic() < deadline, "health stayed SERVING"
                        await asyncio.sleep(0.2)
            finally:
                await start(database_url, name, out=False)
            # Allowed again: the same calls are served.
            deadline = time.monotonic() + CALL_S
            while True:
                try:
                    reply = await game.GetTable(
                        game_pb2.GetTableRequest(table_id=table_id), metadata=auth
                    )
                    break
                except grpc.aio.AioRpcError as error:
                    assert error.code() == grpc.StatusCode.UNAVAILABLE
                    assert time.monotonic() < deadline, "never served again"
                    await asyncio.sleep(0.2)
            assert reply.view.table_id == table_id
