"""Who is calling: the verified claims of the RPC being handled.

The interceptor (`services.common.interceptors.Gate`) verifies the bearer token
once per call and binds the call to `CURRENT_CALL`; servicers and plain
functions read the caller through :func:`current_claims`,
:func:`current_player_id`, :func:`require_player`, :func:`require_service` and
:func:`require_operator`: each kind of token opens its own calls and no other.

The claims travel in a ContextVar rather than a servicer argument, so plain
functions a thin servicer calls (and log binding) can read them. grpc.aio runs
each RPC in its own task, with its own copy of the context: a value set while
handling one call is never seen by another.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any, NoReturn, Protocol

import grpc
import structlog

from services.common import errors
from services.common.auth import Claims, TokenInvalid
from services.common.wire.reasons import ServiceReason

log = structlog.get_logger(__name__)


class Caller(Protocol):
    """What the interceptor knows of the call a task serves."""

    @property
    def claims(self) -> Claims | None: ...
    @property
    def method(self) -> str: ...
    @property
    def request_id(self) -> str: ...


PUBLIC_METHODS = frozenset({"/rummy.v1.AuthService/Login"})
PUBLIC_SERVICES = frozenset(
    {
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
        "grpc.reflection.v1.ServerReflection",
    }
)
"""Probes (kubelet, load balancers) and tools like grpcurl carry no token."""

CURRENT_CALL: ContextVar[Caller | None] = ContextVar("rummy_call", default=None)
"""The call a task serves: one context variable for identity and log context."""

TOKEN_MESSAGES = {
    ServiceReason.TOKEN_MISSING: "Please sign in.",
    ServiceReason.TOKEN_EXPIRED: "Your sign-in has expired. Please sign in again.",
    ServiceReason.TOKEN_INVALID: "Your sign-in is not valid. Please sign in again.",
}


async def refuse_token(
    context: grpc.aio.ServicerContext[Any, Any], reason: ServiceReason
) -> NoReturn:
    """End the call with UNAUTHENTICATED: ``reason`` is a token refusal's code."""
    await errors.abort(context, grpc.StatusCode.UNAUTHENTICATED, reason, TOKEN_MESSAGES[reason])


class NotAuthenticated(LookupError):
    """Read the caller's identity outside an authenticated RPC (a server bug)."""


def current_claims() -> Claims:
    """Claims of the token that authenticated the RPC being handled."""
    call = CURRENT_CALL.get()
    if call is None or call.claims is None:
        raise NotAuthenticated("no authenticated caller in this context")
    return call.claims


def log_context(
    _logger: object, _name: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """structlog processor: the request id, method and caller of the call being served."""
    call = CURRENT_CALL.get()
    if call is not None:
        event.setdefault("request_id", call.request_id)
        event.setdefault("rpc", call.method)
        if call.claims is not None:
            event.setdefault("caller", call.claims.subject)
    return event


def current_player_id() -> str:
    """The calling player's id. Service credentials and operators have none."""
    claims = current_claims()
    if not claims.is_player:
        raise NotAuthenticated(f"{claims.role.value} {claims.subject!r} is not a player")
    return claims.subject


async def require_service(context: grpc.aio.ServicerContext[Any, Any]) -> Claims:
    """For internal methods: abort with PERMISSION_DENIED unless a service calls."""
    claims = current_claims()
    if not claims.is_service:
        await errors.abort(
            context,
            grpc.StatusCode.PERMISSION_DENIED,
            ServiceReason.SERVICE_CREDENTIAL_REQUIRED,
            "This call is reserved for the game's own services.",
        )
    return claims


async def require_player(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    """For player methods: abort with PERMISSION_DENIED for a service credential
    or an operator token."""
    claims = current_claims()
    if not claims.is_player:
        await errors.abort(
            context,
            grpc.StatusCode.PERMISSION_DENIED,
            ServiceReason.PLAYER_CREDENTIAL_REQUIRED,
            "This call needs a player's sign-in.",
        )
    return claims.subject


async def require_operator(context: grpc.aio.ServicerContext[Any, Any]) -> Claims:
    """For the admin services: abort with PERMISSION_DENIED unless an operator calls.
    A refusal is logged with who tried: every use of these calls leaves a line."""
    claims = current_claims()
    if not claims.is_operator:
        log.warning(
            "admin_refused", who=claims.subject, role=claims.role.value, rpc=_method_called()
        )
        await errors.abort(
            context,
            grpc.StatusCode.PERMISSION_DENIED,
            ServiceReason.OPERATOR_CREDENTIAL_REQUIRED,
            "This call is reserved for the people who run the game, with an operator token.",
        )
    return claims


def _method_called() -> str:
    call = CURRENT_CALL.get()
    return call.method if call is not None else ""


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The token of the ``authorization: Bearer <token>`` header, or ''; TokenInvalid
    for an authorization header of another scheme."""
    for key, value in metadata or ():
        if key.lower() != "authorization":
            continue
        text = value.decode() if isinstance(value, bytes) else value
        scheme, _, token = text.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise TokenInvalid("authorization header is not a bearer token")
        return token.strip()
    return ""


def is_public(method: str) -> bool:
    """``method`` is the full path ``/package.Service/Method``."""
    service = method.lstrip("/").partition("/")[0]
    return method in PUBLIC_METHODS or service in PUBLIC_SERVICES
