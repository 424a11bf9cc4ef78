"""What a call answers when the database below it fails: every way PostgreSQL
says "not now" is UNAVAILABLE with a reason (clients retry it), never UNKNOWN."""

from __future__ import annotations

import uuid

import asyncpg
import grpc
import pytest

from services.common.failures import refusal_of_failure
from services.common.pb.rummy.v1 import game_pb2

from .harness import address, create_table, login, refused, snapshot, start_server


@pytest.mark.parametrize(
    "error",
    [
        asyncpg.TooManyConnectionsError("sorry, too many clients already"),
        asyncpg.OutOfMemoryError("out of memory"),
        asyncpg.DiskFullError("could not extend file"),
        asyncpg.QueryCanceledError("canceling statement due to statement timeout"),
        asyncpg.ReadOnlySQLTransactionError("cannot execute UPDATE in a read-only transaction"),
        asyncpg.LockNotAvailableError("canceling statement due to lock timeout"),
        asyncpg.AdminShutdownError("terminating connection due to administrator command"),
        asyncpg.CannotConnectNowError("the database system is starting up"),
        ConnectionResetError("connection reset by peer"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_a_database_that_cannot_serve_now_is_unavailable(error: Exception) -> None:
    refusal = refusal_of_failure(error)
    assert refusal is not None
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE")


def test_a_bug_is_not_mistaken_for_an_outage() -> None:
    assert refusal_of_failure(asyncpg.UndefinedColumnError("column x does not exist")) is None
    assert refusal_of_failure(KeyError("x")) is None


async def test_a_move_behind_a_lock_held_too_long_is_unavailable_and_changes_nothing(
    fresh_dsn: str,
) -> None:
    server = await start_server(fresh_dsn, lock_timeout_s=0.2)
    holder = await asyncpg.connect(fresh_dsn)
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            players = [await login(channel, f"P{i}") for i in range(2)]
            table_id = await create_table(channel, players)
            before = await snapshot(players, table_id)
            mover = next(p for p in players if p.seat == before[0].current_seat)
            async with holder.transaction():  # a session stuck holding the table's row
                await holder.execute(
                    "SELECT 1 FROM tables WHERE id = $1 FOR UPDATE", uuid.UUID(table_id)
                )
                draw = mover.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
                assert await refused(draw) == (
                    grpc.StatusCode.UNAVAILABLE,
                    "DATABASE_UNAVAILABLE",
                )
            assert await snapshot(players, table_id) == before
    finally:
        await holder.close()
        await server.stop(0)
