"""Rich gRPC errors: every refusal carries a stable reason a client can switch on.

A refusal is a ``google.rpc.Status`` with one ``google.rpc.ErrorInfo`` detail
(AIP-193): ``reason`` is an UPPER_SNAKE code that never changes meaning,
``domain`` is ``rummy.v1``, and the status message is a sentence a player can
read. Apps show a message chosen by ``reason`` and never parse the text.
Clients read it back with :func:`error_info` (or ``rpc_status.from_call``).

A refusal that may be retried as it is also carries a ``google.rpc.RetryInfo``
detail (AIP-194), the standard form of the wait gRPC stacks understand: its
``retry_delay`` is :func:`retry_delay_ms`. Where the ErrorInfo metadata says
``retry_after_ms`` (the form older clients read) the two are the same wait.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

import asyncpg
import grpc
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from services.common.wire.reasons import ServiceReason

DOMAIN = "rummy.v1"

RETRY_AFTER = "retry_after_ms"
"""The ErrorInfo metadata key of a wait the server chose (a rate limit's bucket
refilling, a full replica): kept beside RetryInfo for clients that read it."""

RETRY_AFTER_MS: Mapping[str, int] = {
    # A database failing over or restarting is back in seconds, not at once.
    ServiceReason.DATABASE_UNAVAILABLE: 1_000,
    # Another move of the same table won the race: this one is judged again on
    # the new state (a stale `expected_version` is refused then, VERSION_STALE).
    ServiceReason.CONFLICT: 100,
}
"""The wait of refusals that may be retried and name none in their metadata."""

UNAVAILABLE_RETRY_MS = 200
"""The wait of any other UNAVAILABLE refusal (a server stopping: another replica
takes the call; a Watch to resume; no invite code free): UNAVAILABLE always
means "call again" (gRPC's own retry policy retries it, proto/service_config.json)."""

INTERNAL_MESSAGE = "Something went wrong on the server. Please try again in a moment."
"""What a player is told of a fault of the server's own (reason ``INTERNAL``)."""

DB_ERRORS = (
    # The client side: no socket, a connection gone or cut mid-query (asyncpg #784).
    OSError,
    asyncpg.InterfaceError,
    asyncpg.InternalClientError,
    # Whole SQLSTATE classes, so that no way of being out of reach is left out:
    asyncpg.PostgresConnectionError,  # 08: the connection failed or was lost
    asyncpg.InvalidAuthorizationSpecificationError,  # 28: our role may not sign in now
    asyncpg.InvalidCatalogNameError,  # 3D000: the database is gone (dropped, renamed)
    asyncpg.InsufficientResourcesError,  # 53: out of connections, memory or disk
    # 55: not accepting connections (ALLOW_CONNECTIONS false), a lock not granted
    # in time (lock_timeout), an object in use.
    asyncpg.ObjectNotInPrerequisiteStateError,
    # 57: shutting down, crashed, starting up, in recovery, dropped, a statement
    # cancelled by an operator or a timeout, an idle session ended.
    asyncpg.OperatorInterventionError,
    asyncpg.PostgresSystemError,  # 58: an I/O error outside PostgreSQL
    # 25: after a failover, a connection that still reaches the old primary (now a
    # standby); a session ended for idling in a transaction too long.
    asyncpg.ReadOnlySQLTransactionError,
    asyncpg.IdleInTransactionSessionTimeoutError,
)
"""What a database out of reach raises, or one that cannot serve this statement
now; callers answer UNAVAILABLE (DATABASE_UNAVAILABLE) and clients retry. Listed
by SQLSTATE class where the whole class means that."""


def rich_status(
    code: grpc.StatusCode,
    reason: str,
    message: str,
    *,
    metadata: Mapping[str, str] | None = None,
) -> grpc.Status:
    """The status to send: ``code`` and ``message``, plus an ErrorInfo detail, and
    a RetryInfo one if the refusal may be retried (:func:`retry_delay_ms`)."""
    if code is grpc.StatusCode.OK:
        raise ValueError("an error status cannot be OK")
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata or {})
    details = [_packed(info)]
    delay_ms = retry_delay_ms(code, reason, info.metadata)
    if delay_ms is not None:
        delay = duration_pb2.Duration()
        delay.FromMilliseconds(delay_ms)
        details.append(_packed(error_details_pb2.RetryInfo(retry_delay=delay)))
    status = status_pb2.Status(code=code.value[0], message=message, details=details)
    told: grpc.Status = rpc_status.to_status(status)  # grpc-status has no type hints
    return told


def retry_delay_ms(code: grpc.StatusCode, reason: str, metadata: Mapping[str, str]) -> int | None:
    """How long a refusal asks its caller to wait before making the same call
    again, in milliseconds; None if the same call would be refused the same way.

    The wait the metadata names (``retry_after_ms``), else the one of the reason
    (`RETRY_AFTER_MS`), else `UNAVAILABLE_RETRY_MS` for any UNAVAILABLE refusal.
    A refusal of the request itself, of the rules or of the caller's sign-in,
    and a fault of the server's own (INTERNAL), carry none."""
    if RETRY_AFTER in metadata:
        return int(metadata[RETRY_AFTER])
    if reason in RETRY_AFTER_MS:
        return RETRY_AFTER_MS[reason]
    if code is grpc.StatusCode.UNAVAILABLE:
        return UNAVAILABLE_RETRY_MS
    return None


def _packed(detail: Message) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(detail)
    return packed


async def abort(
    context: grpc.aio.ServicerContext[Any, Any],
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
