"""Server interceptor that turns the bearer token of every RPC into a caller identity.

Every method but ``AuthService/Login`` and the standard health and reflection
services needs ``authorization: Bearer <token>``. A missing or bad token ends
the call with UNAUTHENTICATED and an ErrorInfo reason (TOKEN_MISSING,
TOKEN_EXPIRED, TOKEN_INVALID) before the servicer runs. Otherwise the
verified claims are available to the servicer through :func:`current_claims`
and :func:`current_player_id`.

The claims travel in a ContextVar rather than a servicer argument so that
plain functions called by a thin servicer (and log binding) can read them.
grpc.aio runs each RPC in its own asyncio task, which owns a copy of the
context: a value set while handling one call is never seen by another.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextvars import ContextVar
from typing import Any

import grpc
import structlog

from services.common import errors
from services.common.auth import Claims, TokenError, TokenInvalid, verify_token

PUBLIC_METHODS = frozenset({"/rummy.v1.AuthService/Login"})
PUBLIC_SERVICES = frozenset(
    {
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
        "grpc.reflection.v1.ServerReflection",
    }
)
"""Probes (kubelet, load balancers) and tools like grpcurl carry no token."""

_claims: ContextVar[Claims | None] = ContextVar("rummy_claims", default=None)

_MESSAGES = {
    "TOKEN_MISSING": "Please sign in.",
    "TOKEN_EXPIRED": "Your sign-in has expired. Please sign in again.",
    "TOKEN_INVALID": "Your sign-in is not valid. Please sign in again.",
}


class NotAuthenticated(LookupError):
    """Read the caller's identity outside an authenticated RPC (a server bug)."""


def current_claims() -> Claims:
    """Claims of the token that authenticated the RPC being handled."""
    claims = _claims.get()
    if claims is None:
        raise NotAuthenticated("no authenticated caller in this context")
    return claims


def current_player_id() -> str:
    """The calling player's id. Service credentials have no player id."""
    claims = current_claims()
    if claims.is_service:
        raise NotAuthenticated(f"service {claims.subject!r} is not a player")
    return claims.subject


async def require_service(context: grpc.aio.ServicerContext) -> Claims:
    """For internal methods: abort with PERMISSION_DENIED unless a service calls."""
    claims = current_claims()
    if not claims.is_service:
        await errors.abort(
            context,
            grpc.StatusCode.PERMISSION_DENIED,
            "SERVICE_CREDENTIAL_REQUIRED",
            "This call is reserved for the game's own services.",
        )
    return claims


async def require_player(context: grpc.aio.ServicerContext) -> str:
    """For player methods: abort with PERMISSION_DENIED for a service credential."""
    claims = current_claims()
    if claims.is_service:
        await errors.abort(
            context,
            grpc.StatusCode.PERMISSION_DENIED,
            "PLAYER_CREDENTIAL_REQUIRED",
            "This call needs a player's sign-in.",
        )
    return claims.subject


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The token of the ``authorization: Bearer <token>`` header, or ''.

    Raises TokenInvalid for an authorization header of another scheme.
    """
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


# grpcio ships no type hints, so its base classes are `Any` to mypy.
class AuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Verifies bearer tokens; see the module docstring."""

    def __init__(self, *, secret: str, clock: Callable[[], float] = time.time) -> None:
        self._secret = secret
        self._clock = clock

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or is_public(handler_call_details.method):
            return handler
        try:
            token = bearer_token(handler_call_details.invocation_metadata)
            claims = verify_token(token, secret=self._secret, now=self._clock())
        except TokenError as error:
            denial = _deny(error)
            return _replace_behavior(handler, lambda _behavior: denial)
        return _replace_behavior(handler, lambda behavior: _bind(claims, behavior))


def _deny(error: TokenError) -> Callable[..., Awaitable[None]]:
    reason = error.reason

    async def deny(_request: Any, context: grpc.aio.ServicerContext) -> None:
        await errors.abort(context, grpc.StatusCode.UNAUTHENTICATED, reason, _MESSAGES[reason])

    return deny


def _bind(claims: Claims, behavior: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``behavior`` so it runs with ``claims`` in the context.

    The value is set inside the handler's own task, so it holds even if a
    gRPC release ran interceptors elsewhere; it is never reset because that
    task (and its context) ends with the RPC.
    """
    if inspect.isasyncgenfunction(behavior):

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            _claims.set(claims)
            structlog.contextvars.bind_contextvars(caller=claims.subject)
            async for response in behavior(request, context):
                yield response

        return stream

    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        _claims.set(claims)
        structlog.contextvars.bind_contextvars(caller=claims.subject)
        result = behavior(request, context)
        return await result if inspect.isawaitable(result) else result

    return call


_KINDS = (
    ("unary_unary", grpc.unary_unary_rpc_method_handler),
    ("unary_stream", grpc.unary_stream_rpc_method_handler),
    ("stream_unary", grpc.stream_unary_rpc_method_handler),
    ("stream_stream", grpc.stream_stream_rpc_method_handler),
)


def _replace_behavior(
    handler: grpc.RpcMethodHandler,
    wrap: Callable[[Callable[..., Any]], Callable[..., Any]],
) -> grpc.RpcMethodHandler:
    """A handler of the same kind and serializers whose behavior is ``wrap``ped."""
    for kind, make in _KINDS:
        behavior = getattr(handler, kind)
        if behavior is not None:
            return make(
                wrap(behavior),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
    raise ValueError(f"method handler without behavior: {handler!r}")
