"""Rich gRPC errors: every refusal carries a stable reason a client can switch on.

A refusal is a ``google.rpc.Status`` with one ``google.rpc.ErrorInfo`` detail
(AIP-193): ``reason`` is an UPPER_SNAKE code that never changes meaning,
``domain`` is ``rummy.v1``, and the status message is a sentence a player can
read. Apps show a message chosen by ``reason`` and never parse the text.
Clients read it back with :func:`error_info` (or ``rpc_status.from_call``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

import asyncpg
import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

DOMAIN = "rummy.v1"

INTERNAL_MESSAGE = "Something went wrong on the server. Please try again in a moment."
"""What a player is told of a fault of the server's own (reason ``INTERNAL``)."""

DB_ERRORS = (
    OSError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.CannotConnectNowError,
    # PostgreSQL shutting down or restarting ends its sessions with these.
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    # A connection cut mid-query can surface as this (asyncpg issue 784).
    asyncpg.InternalClientError,
    # Out of connections, memory or disk: the server is there but cannot serve now.
    asyncpg.InsufficientResourcesError,
    # A statement cancelled by an operator or a server-side timeout.
    asyncpg.QueryCanceledError,
    # After a failover, a connection that still reaches the old primary (now a standby).
    asyncpg.ReadOnlySQLTransactionError,
    # A lock the server's lock_timeout gave up waiting for.
    asyncpg.LockNotAvailableError,
    # A session PostgreSQL ended for sitting in a transaction too long.
    asyncpg.IdleInTransactionSessionTimeoutError,
)
"""What a database outage raises, or a database that cannot serve this statement
now; callers answer UNAVAILABLE and clients retry."""


def rich_status(
    code: grpc.StatusCode,
    reason: str,
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
) -> grpc.Status:
    """The status to send: ``code`` and ``message``, plus an ErrorInfo detail."""
    if code is grpc.StatusCode.OK:
        raise ValueError("an error status cannot be OK")
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata or {})
    detail = any_pb2.Any()
    detail.Pack(info)
    status = status_pb2.Status(code=code.value[0], message=message, details=[detail])
    return rpc_status.to_status(status)


async def abort(
    context: grpc.aio.ServicerContext,
    code: grpc.StatusCode,
    reason: str,
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
) -> NoReturn:
    """End the RPC with a rich status; ``metadata`` goes into the ErrorInfo."""
    await context.abort_with_status(rich_status(code, reason, message, metadata=metadata))
    # grpc.aio's abort always raises; this line only tells type checkers so.
    raise AssertionError("abort_with_status returned")


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo of a failed call (sync or grpc.aio), or None if it has none."""
    try:
        status = rpc_status.from_call(error)
    except ValueError:
        # The rich status contradicts the plain one: trust neither detail.
        return None
    if status is None:
        return None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    return None
