"""The one server interceptor every RPC passes: what all calls share.

For each call, in this order:

1. Metrics and log context: the call is timed and counted by its final status
   code (CANCELLED for one its client cancelled, even as a response was being
   written: never INTERNAL, and no traceback), and a request id (the client's
   ``x-request-id``, else a new one), the method and the caller are bound to the
   structlog context of its task.
2. Limits (`services.common.limits`): the connection's and the player's rate,
   and open response streams per player. Verified service credentials, operator
   tokens and the health and reflection services are not limited.
3. A request over `MAX_REQUEST_BYTES` is refused unread with INVALID_ARGUMENT,
   reason ``REQUEST_TOO_LARGE``; one that does not decode, with
   INVALID_ARGUMENT, reason ``MALFORMED_REQUEST`` (gRPC alone would answer
   RESOURCE_EXHAUSTED and UNKNOWN, with no reason an app can switch on).
4. Identity: every method but ``AuthService/Login`` and the health and
   reflection services needs ``authorization: Bearer <token>``. A missing or
   bad token ends the call with UNAUTHENTICATED and an ErrorInfo reason
   (TOKEN_MISSING, TOKEN_EXPIRED, TOKEN_INVALID) before the servicer runs.
   Otherwise the verified claims are available to the servicer through
   `services.common.identity`.
5. A table's event stream (`EXPIRING_STREAMS`) outlives no token: before each
   message it sends, a token that has expired since the stream opened ends it
   with UNAUTHENTICATED, reason ``TOKEN_EXPIRED``; the client signs in again
   and resumes. A table sends at least one event a turn, so the stream ends
   within a turn of the expiry, at no cost to an idle stream (no timer per
   stream).

One interceptor rather than three: each layer costs a coroutine per call and a
generator frame per open stream, and the token is verified once, not per layer.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, NoReturn

import grpc
import structlog

from services.common import errors
from services.common.auth import Claims, TokenError, TokenExpired, TokenInvalid, TokenVerifier
from services.common.decoding import (
    MALFORMED,
    MAX_REQUEST_BYTES,
    TOO_LARGE,
    tolerant_decoder,
)
from services.common.identity import (
    CURRENT_CALL,
    PUBLIC_SERVICES,
    bearer_token,
    is_public,
    refuse_token,
)
from services.common.limits import Limits, Quotas
from services.common.metrics import RPC_DURATION, RPC_REQUESTS
from services.common.wire.reasons import ServiceReason

EXPIRING_STREAMS = frozenset({("GameService", "Watch")})
"""(service, method) of the streams an expired token ends. Not the matchmaker's:
closing a waiting stream gives up the ticket, and a ticket lives minutes."""


log = structlog.get_logger(__name__)


def _split(method: str) -> tuple[str, str]:
    """``/rummy.v1.GameService/Discard`` -> (``GameService``, ``Discard``)."""
    service, _, name = method.lstrip("/").partition("/")
    return service.rpartition(".")[2], name


def _closed_under(error: BaseException | None) -> bool:
    """Whether the call ended at the transport while its handler was at work: its
    client cancelled it, its connection dropped or its deadline passed as the
    handler wrote (or ended) it. grpc.aio fails that write with an
    ExecuteBatchError, a `grpc.aio.InternalError`, and may do so before it
    cancels the handler's task: the call is cancelled all the same, no fault of
    the handler's, and nobody is left to send a status to."""
    return isinstance(error, grpc.aio.InternalError)


def _code(context: grpc.aio.ServicerContext[Any, Any], error: BaseException | None) -> str:
    """The call's status; CANCELLED when its client went away (or the server stops)."""
    if _closed_under(error):
        return "CANCELLED"
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return str(code.name)
    if error is None:
        return "OK"
    cancelled = isinstance(error, asyncio.CancelledError) or context.cancelled()
    return "CANCELLED" if cancelled else "UNKNOWN"


async def _internal(context: grpc.aio.ServicerContext[Any, Any], error: Exception) -> NoReturn:
    """A handler failed unexpectedly: logged whole, told to the client as INTERNAL
    with a reason and a sentence, never with the error's own text (gRPC would send
    "Unexpected <class ...>: ..." as UNKNOWN). One that set its status first
    (the generated base class's UNIMPLEMENTED) ends with that status."""
    if isinstance(context.code(), grpc.StatusCode):
        raise error
    log.error("unexpected_error", exc_info=error)
    try:
        await errors.abort(
            context,
            grpc.StatusCode.INTERNAL,
            ServiceReason.INTERNAL,
            errors.INTERNAL_MESSAGE,
        )
    except grpc.aio.InternalError as closed:  # the client left meanwhile: see _failed
        raise asyncio.CancelledError from closed


async def _failed(context: grpc.aio.ServicerContext[Any, Any], error: BaseException) -> None:
    """A handler ended with ``error``, which its caller raises on if this returns.
    A call the client cancelled (or lost) as the handler wrote to it ends as grpc.aio
    ends a cancelled call, with CancelledError: grpc.aio would log the error it
    raised for that write as a fault (with a traceback) unless its own notice of
    the cancellation had come first."""
    if _closed_under(error):
        raise asyncio.CancelledError from error
    if isinstance(error, Exception) and not isinstance(error, grpc.aio.AbortError):
        await _internal(context, error)


async def _written(
    inner: Callable[..., Any], requests: Any, context: grpc.aio.ServicerContext[Any, Any]
) -> None:
    """A request-streaming handler's responses written through the context, whichever
    way it makes them (an async generator, or a coroutine that writes them itself)."""
    items = inner(requests, context)
    if inspect.isasyncgen(items):
        async for item in items:
            await context.write(item)
    else:
        await items


def _request_id(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    for key, value in metadata or ():
        if key == "x-request-id":
            text = value.decode() if isinstance(value, bytes) else value
            return text[:64]
    return uuid.uuid4().hex[:16]


class _Call:
    """What the interceptor learned of one call before its handler runs."""

    __slots__ = (
        "_request_id",
        "claims",
        "context",
        "denial",
        "limited",
        "method",
        "public",
        "service",
    )

    def __init__(self, service: str, method: str) -> None:
        self.service = service
        self.method = method
        self.context: grpc.aio.ServicerContext[Any, Any] | None = None
        self.claims: Claims | None = None
        self.denial: TokenError | None = None
        self.limited = True
        self.public = False
        """Health or reflection: open to all, never rate-limited (probes), but its
        streams count toward the replica's, by connection."""
        self._request_id = ""

    @property
    def request_id(self) -> str:
        """The client's ``x-request-id``, else a new one: made when first logged."""
        if not self._request_id:
            context = self.context
            self._request_id = _request_id(context.invocation_metadata() if context else None)
        return self._request_id

    @property
    def player(self) -> str | None:
        """Whose bucket to charge: a verified player's id, else None."""
        if self.claims is None or not self.claims.is_player:
            return None
        return self.claims.subject

    async def enter(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any], quotas: Quotas
    ) -> None:
        """Bind the log context, then limits, decoding and identity, in that order."""
        self.context = context
        CURRENT_CALL.set(self)
        if self.limited:
            await quotas.admit(context, self.player)
        if request is TOO_LARGE:
            # INVALID_ARGUMENT, not RESOURCE_EXHAUSTED: the same request will never
            # pass, and apps read RESOURCE_EXHAUSTED as "wait, then retry" (RATE_LIMITED).
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.REQUEST_TOO_LARGE,
                "The request is too large for the game to read. Please update the app.",
                metadata={"max_bytes": str(MAX_REQUEST_BYTES)},
            )
        if request is MALFORMED:
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.MALFORMED_REQUEST,
                "The request could not be read. Please update the app.",
            )
        if self.denial is not None:
            await refuse_token(context, self.denial.reason)

    def finish(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        error: BaseException | None,
        started: float | None = None,
    ) -> None:
        if started is not None:
            RPC_DURATION.labels(self.service, self.method).observe(time.perf_counter() - started)
        RPC_REQUESTS.labels(self.service, self.method, _code(context, error)).inc()


class Gate(grpc.aio.ServerInterceptor):
    """Metrics, limits, decoding and identity; see the module docstring.

    The wrappers are methods bound with `functools.partial` rather than
    closures made per call, and streams are written through the context rather
    than by one more async generator: an idle stream holds less."""

    def __init__(
        self,
        limits: Limits,
        *,
        secret: str,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.quotas = Quotas(limits, clock=monotonic)
        self._tokens = TokenVerifier(secret)
        self._clock = clock
        self._decoders: dict[Callable[[bytes], Any], Callable[[bytes], Any] | None] = {}
        self._names: dict[str, tuple[str, str]] = {}
        """(service, method) by full method path, for the methods this server has."""
        self._stopping = asyncio.Event()

    def close_streams(self) -> None:
        """The server is stopping: the streams no handler of ours ends by itself
        (health's Watch, reflection) end now, UNAVAILABLE, rather than holding
        the server for its whole grace period."""
        self._stopping.set()

    def _decoder(self, decode: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
        if decode is None:
            return None
        tolerant = self._decoders.get(decode)
        if tolerant is None:
            tolerant = self._decoders[decode] = tolerant_decoder(decode)
        return tolerant

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(details)
        if handler is None:
            return handler
        names = self._names.get(details.method)
        if names is None:
            names = self._names[details.method] = _split(details.method)
        call = _Call(*names)
        exempt = details.method.lstrip("/").partition("/")[0] in PUBLIC_SERVICES
        if exempt:
            call.limited = False
            call.public = True
        else:
            try:
                token = bearer_token(details.invocation_metadata)
                call.claims = self._tokens.verify(token, self._clock())
            except TokenError as error:
                if not is_public(details.method):
                    call.denial = error
            except UnicodeDecodeError:
                call.denial = TokenInvalid("authorization header is not text")
            if call.claims is not None and not call.claims.is_player:
                call.limited = False  # a service, or an operator
        decode = self._decoder(handler.request_deserializer)
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                functools.partial(Gate._unary, self, call, handler.unary_unary),
                decode,
                handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                functools.partial(Gate._streaming, self, call, handler.unary_stream),
                decode,
                handler.response_serializer,
            )
        if handler.stream_stream is not None and call.public:  # reflection
            # Counted as a response stream is: its requests are the "request".
            written = functools.partial(_written, handler.stream_stream)
            return grpc.stream_stream_rpc_method_handler(
                functools.partial(Gate._streaming, self, call, written),
                handler.request_deserializer,
                handler.response_serializer,
            )
        # No client-streaming RPC in our services; leave any other kind alone.
        return handler

    async def _unary(
        self,
        call: _Call,
        inner: Callable[..., Any],
        request: Any,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> Any:
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            await call.enter(request, context, self.quotas)
            result = inner(request, context)
            return await result if inspect.isawaitable(result) else result
        except BaseException as exc:
            error = exc
            await _failed(context, exc)
            raise
        finally:
            call.finish(context, error, started)

    async def _streaming(
        self,
        call: _Call,
        inner: Callable[..., Any],
        request: Any,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        """Any response stream, written through the context: whether the handler
        yields its messages (an async generator) or writes them itself (grpc
        health's Watch). A coroutine rather than one more async generator per
        open stream."""
        error: BaseException | None = None
        player = None
        try:
            await call.enter(request, context, self.quotas)
            player = await self._open(call, context)
            if inspect.isasyncgenfunction(inner):  # closed at once, even when cancelled
                expiring = (call.service, call.method) in EXPIRING_STREAMS
                claims = call.claims if expiring else None
                async with contextlib.aclosing(inner(request, context)) as items:
                    async for item in items:
                        if claims is not None and claims.expires_at <= self._clock():
                            await refuse_token(context, TokenExpired.reason)
                        await context.write(item)
            else:
                await self._until_stopping(inner(request, context), context)
        except BaseException as exc:
            error = exc
            await _failed(context, exc)
            raise
        finally:
            if player is not None:
                self.quotas.close_stream(player)
            call.finish(context, error)

    async def _until_stopping(
        self, work: Awaitable[None], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        handling = asyncio.ensure_future(work)
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait((handling, stopping), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not handling.done():
                handling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await handling
        if not handling.cancelled():
            return handling.result()
        await errors.abort(
            context,
            grpc.StatusCode.UNAVAILABLE,
            ServiceReason.SERVER_STOPPING,
            "The server is restarting: connect again.",
        )

    async def _open(self, call: _Call, context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
        """Count a limited player's open stream, or a public one's by its connection;
        who to give it back to, if anyone."""
        player = f"peer {context.peer()}" if call.public else call.player
        if not (call.limited or call.public) or player is None:
            return None
        await self.quotas.open_stream(context, player)
        return player
