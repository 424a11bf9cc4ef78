"""How the client tells a refused call (`Refusal`, read back with
`Refusal.of_call`): when to call again, and the client's own sentences for what
gRPC reports only in its message (a rate limit's wait, a connection in the
wrong protocol)."""

from __future__ import annotations

import random
from enum import StrEnum

import grpc

from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal


class ClientReason(StrEnum):
    """The client's own reasons, for refusals it makes itself (never sent by a server)."""

    TLS_HANDSHAKE_FAILED = "TLS_HANDSHAKE_FAILED"
    """A `--tls` connection whose handshake failed."""
    PLAINTEXT_REFUSED = "PLAINTEXT_REFUSED"
    """A plaintext connection a server keeps closing at once."""
    GAME_SERVICE_NOT_FOUND = "GAME_SERVICE_NOT_FOUND"
    """No game service the client could reach serves the player's table."""
    PRIVATE_TABLE_OPEN = "PRIVATE_TABLE_OPEN"
    """This player already waits at a private table."""
    TICKET_ENDED = "TICKET_ENDED"
    """The matchmaker gave up on the ticket this client waits with."""
    TABLE_CLOSED = "TABLE_CLOSED"
    """The private table this client hosted went with the matchmaker it lost."""


LIMITED = (ServiceReason.RATE_LIMITED, ServiceReason.SERVER_FULL)
"""Refusals that say when to call again (`retry_after_ms`): this client is going
too fast, or the server holds all the streams it can."""
MIN_RATE_WAIT_S = 0.05
"""The least a rate-limited call waits before it is made again."""

RETRYABLE = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    # A server shutting down cancels the calls it still holds. (A call this
    # client gives up on ends with asyncio.CancelledError, never this code.)
    grpc.StatusCode.CANCELLED,
)
STREAM_RETRYABLE = (*RETRYABLE, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
"""A stream may also end like this when its server goes away mid-flight."""


def rate_limited_for(refused: Refusal) -> float | None:
    """How long to wait before calling again when the server says this client is
    calling too fast (RESOURCE_EXHAUSTED, RATE_LIMITED: its `retry_after_ms` is
    when its bucket holds a token again) or is full (SERVER_FULL); None for any
    other refusal. A little
    jitter, so clients limited together do not all come back at once."""
    if refused.code != grpc.StatusCode.RESOURCE_EXHAUSTED or refused.reason not in LIMITED:
        return None
    try:
        after_s = int(refused.metadata.get("retry_after_ms", "0")) / 1000
    except ValueError:
        after_s = 0.0
    return max(MIN_RATE_WAIT_S, after_s) * random.uniform(1.0, 1.25)


def tls_failure(refused: Refusal, target: str) -> Refusal | None:
    """A TLS handshake with ``target`` that failed, told in one sentence; None for
    any other refusal. gRPC says so only in its message (no code or detail of its
    own), and retrying does not help: the server speaks plaintext, or its
    certificate is not trusted here."""
    text = refused.message.lower()
    if refused.code != grpc.StatusCode.UNAVAILABLE or "handshake failed" not in text:
        return None
    if "certificate_verify_failed" in text:
        why = (
            f"The TLS certificate of {target} is not trusted here (it is checked against"
            " the system's root certificates)."
        )
    else:
        why = (
            f"The server at {target} did not answer TLS: if it is a plaintext server"
            " (one on this machine, say), run without --tls."
        )
    return Refusal(grpc.StatusCode.FAILED_PRECONDITION, ClientReason.TLS_HANDSHAKE_FAILED, why)


def closed_at_once(refused: Refusal) -> bool:
    """A plaintext connection the server closed before answering anything, as a
    TLS server (or gateway) does: gRPC reports it as "Socket closed"."""
    return (
        refused.code == grpc.StatusCode.UNAVAILABLE and "socket closed" in refused.message.lower()
    )


def plaintext_failure(target: str) -> Refusal:
    return Refusal(
        grpc.StatusCode.FAILED_PRECONDITION,
        ClientReason.PLAINTEXT_REFUSED,
        f"The server at {target} closes plaintext connections at once: if it is behind"
        " TLS (a public address, say), run with --tls.",
    )
