"""How the client tells a refused call: the server's code, ErrorInfo reason and
sentence, and the client's own sentences for what gRPC reports only in its
message (a rate limit's wait, a connection in the wrong protocol)."""

from __future__ import annotations

import random

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

RATE_LIMITED = "RATE_LIMITED"
SERVER_FULL = "SERVER_FULL"
LIMITED = (RATE_LIMITED, SERVER_FULL)
"""Refusals that say when to call again (`retry_after_ms`): this client is going
too fast, or the server holds all the streams it can."""
MIN_RATE_WAIT_S = 0.05
"""The least a rate-limited call waits before it is made again."""
TLS_FAILED = "TLS_HANDSHAKE_FAILED"
"""The client's own reason: a `--tls` connection whose handshake failed."""
PLAINTEXT_FAILED = "PLAINTEXT_REFUSED"
"""The client's own reason: a plaintext connection a server keeps closing at once."""

RETRYABLE = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    # A server shutting down cancels the calls it still holds. (A call this
    # client gives up on ends with asyncio.CancelledError, never this code.)
    grpc.StatusCode.CANCELLED,
)
STREAM_RETRYABLE = (*RETRYABLE, grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
"""A stream may also end like this when its server goes away mid-flight."""


class Refused(Exception):
    """A call the server answered with an error: its code, reason and sentence."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.metadata = metadata or {}

    def __str__(self) -> str:
        return f"{self.message} [{self.reason}]" if self.reason else self.message


def refusal(error: grpc.RpcError) -> Refused:
    """The code, ErrorInfo reason and sentence of a failed call."""
    code: grpc.StatusCode = error.code()
    message: str = error.details() or code.name
    try:
        status = rpc_status.from_call(error)
    except ValueError:
        status = None
    if status is not None:
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                return Refused(code, info.reason, message, dict(info.metadata))
    return Refused(code, "", message)


def rate_limited_for(refused: Refused) -> float | None:
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


def tls_failure(refused: Refused, target: str) -> Refused | None:
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
    return Refused(grpc.StatusCode.FAILED_PRECONDITION, TLS_FAILED, why)


def closed_at_once(refused: Refused) -> bool:
    """A plaintext connection the server closed before answering anything, as a
    TLS server (or gateway) does: gRPC reports it as "Socket closed"."""
    return (
        refused.code == grpc.StatusCode.UNAVAILABLE and "socket closed" in refused.message.lower()
    )


def plaintext_failure(target: str) -> Refused:
    return Refused(
        grpc.StatusCode.FAILED_PRECONDITION,
        PLAINTEXT_FAILED,
        f"The server at {target} closes plaintext connections at once: if it is behind"
        " TLS (a public address, say), run with --tls.",
    )
