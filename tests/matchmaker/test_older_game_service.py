"""A game service that predates CreateTables (a rolling upgrade): the matchmaker
falls back to one CreateTable per table, and every match completes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc

from services.matchmaker.table_maker import CREATE_IN_FLIGHT

from .harness import Store, Waiter, backend, store
from .test_recovery import check_completed, queue_tables

CREATE_TABLE = "/rummy.v1.GameService/CreateTable"
CREATE_TABLES = "/rummy.v1.GameService/CreateTables"


@contextlib.asynccontextmanager
async def without_create_tables(target: str) -> AsyncIterator[tuple[str, list[str]]]:
    """A real server in front of the game service at ``target`` that passes on
    CreateTable alone: any other method is UNIMPLEMENTED, as on an older build.
    Yields its address and the methods callers asked it for."""
    asked: list[str] = []
    upstream = grpc.aio.insecure_channel(target)
    forward = upstream.unary_unary(CREATE_TABLE)

    async def create_table(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        try:
            reply: bytes = await forward(request, metadata=context.invocation_metadata())
        except grpc.aio.AioRpcError as error:
            await context.abort(error.code(), error.details() or "")
        return reply

    class Older(grpc.GenericRpcHandler):
        def service(self, details: Any) -> Any:
            asked.append(details.method)
            if details.method == CREATE_TABLE:
                return grpc.unary_unary_rpc_method_handler(create_table)
            return None

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((Older(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}", asked
    finally:
        await server.stop(0)
        await upstream.close()


async def test_matches_complete_through_a_game_service_without_create_tables(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, replicas=0) as b, store(fresh_dsn) as db:
        async with without_create_tables(b.game_target) as (older, asked):
            replica = await b.add_replica(game_target=older, matching=True)
            _, waiters = await queue_tables(b, replica)
            await check_completed_anywhere(db, waiters)
        assert asked[0] == CREATE_TABLES  # tried first; then only by batches already asking
        assert 1 <= asked.count(CREATE_TABLES) <= CREATE_IN_FLIGHT
        assert asked.count(CREATE_TABLE) >= 6


async def check_completed_anywhere(db: Store, waiters: list[Waiter]) -> None:
    """`check_completed`, against the table ids the matches were given."""
    await asyncio.gather(*(w.end() for w in waiters))
    rows = await db.con.fetch("SELECT id, table_id FROM tickets")
    await check_completed(db, waiters, {str(r["id"]): r["table_id"] for r in rows})
