"""A real gRPC server in front of the real ones, for the client's outage tests:
it passes every call on, except one stream it fails with a chosen status, and
may send the sign-in calls to another server than the rest."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc

from tests.routing import routed_server

WATCH = "/rummy.v1.GameService/Watch"
ENQUEUE = "/rummy.v1.MatchmakerService/Enqueue"
JOIN = "/rummy.v1.MatchmakerService/JoinPrivateTable"
LOGIN = "/rummy.v1.AuthService/Login"
STREAMS = {WATCH, ENQUEUE, JOIN, "/rummy.v1.MatchmakerService/CreatePrivateTable"}
"""The server-streaming methods; every other one is unary."""
AUTH = "/rummy.v1.AuthService/"


@dataclass(frozen=True, slots=True)
class Failing:
    """A stream the front ends itself with ``code``, once it has passed on ``after``
    messages (0: without asking the server behind it at all); only the ``first``
    such streams, if given, and the later ones pass. ``held``: the server behind
    is not told, its stream left open (a connection it has not seen drop yet)."""

    method: str
    code: grpc.StatusCode
    details: str
    after: int = 0
    first: int | None = None
    held: bool = False


@contextlib.asynccontextmanager
async def front(
    target: str, failing: Failing | None = None, *, signer: str = ""
) -> AsyncIterator[tuple[str, Counter[str]]]:
    """A real gRPC server passing every call on to the server at ``target`` (the
    sign-in calls to ``signer``, if given); ``failing``: the stream it fails.
    Yields its address and the calls it was asked, counted by method."""
    asked: Counter[str] = Counter()
    kept: list[grpc.aio.Call] = []
    """Streams left open behind failed ones (`Failing.held`), until the front stops."""
    upstream = grpc.aio.insecure_channel(target)
    signing = grpc.aio.insecure_channel(signer or target)

    def behind(method: str) -> grpc.aio.Channel:
        return signing if method.startswith(AUTH) else upstream

    def unary(method: str) -> Any:
        call = behind(method).unary_unary(method)

        async def handle(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            try:
                reply: bytes = await call(request, metadata=context.invocation_metadata())
            except grpc.aio.AioRpcError as error:
                await context.abort(
                    error.code(), error.details() or "", tuple(error.trailing_metadata() or ())
                )
            return reply

        return grpc.unary_unary_rpc_method_handler(handle)

    def stream(method: str) -> Any:
        fails = failing if failing is not None and failing.method == method else None
        if fails is not None and fails.first is not None and asked[method] > fails.first:
            fails = None

        async def handle(
            request: bytes, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[bytes]:
            if fails is not None and fails.after == 0:
                await context.abort(fails.code, fails.details)
            call = behind(method).unary_stream(method)(
                request, metadata=context.invocation_metadata()
            )
            passed = 0
            try:
                async for reply in call:
                    yield reply
                    passed += 1
                    if fails is not None and passed >= fails.after:
                        break
            except grpc.aio.AioRpcError as error:
                await context.abort(
                    error.code(), error.details() or "", tuple(error.trailing_metadata() or ())
                )
            finally:
                if fails is not None and fails.held:
                    kept.append(call)
                else:
                    call.cancel()  # as a stream the server lost: it cancels its ticket
            if fails is not None:
                await context.abort(fails.code, fails.details)

        return grpc.unary_stream_rpc_method_handler(handle)

    def route(method: str) -> Any:
        asked[method] += 1
        return stream(method) if method in STREAMS else unary(method)

    try:
        async with routed_server(route) as address:
            yield address, asked
    finally:
        for call in kept:
            call.cancel()
        await upstream.close()
        await signing.close()


async def ended(
    task: asyncio.Task[Any], asked: Counter[str], method: str, most: int
) -> BaseException | None:
    """How ``task`` ended, once it has, or None (cancelled) once ``method`` has
    been asked more than ``most`` times."""
    while not task.done() and asked[method] <= most:
        await asyncio.sleep(0.02)
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    return task.exception()
