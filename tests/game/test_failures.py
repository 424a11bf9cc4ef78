"""What a call answers when the database below it fails: every way PostgreSQL
says "not now" is UNAVAILABLE with a reason (clients retry it), never UNKNOWN."""

from __future__ import annotations

import asyncpg
import grpc
import pytest

from services.game.failures import refusal_of_failure


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
