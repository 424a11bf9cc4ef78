"""A real gRPC server in front of the game service, passing some of its methods
on (their answers possibly changed) and answering UNIMPLEMENTED to the rest:
an older build, or one that answers wrongly, as the matchmaker sees it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import grpc

from tests.routing import routed_server

CREATE_TABLE = "/rummy.internal.v1.TableService/CreateTable"
CREATE_TABLES = "/rummy.internal.v1.TableService/CreateTables"

Front = contextlib.AbstractAsyncContextManager[tuple[str, list[str]]]
"""The front's address and the methods callers asked of it, in order."""


def unchanged(reply: bytes) -> bytes:
    return reply


@contextlib.asynccontextmanager
async def game_front(
    target: str, answers: Mapping[str, Callable[[bytes], bytes]]
) -> AsyncIterator[tuple[str, list[str]]]:
    """Each method in ``answers`` goes on to the game service at ``target`` and its
    reply comes back through that function. Yields the front's address and the
    methods callers asked of it, in order."""
    asked: list[str] = []
    upstream = grpc.aio.insecure_channel(target)

    def forward(method: str, change: Callable[[bytes], bytes]) -> Any:
        call = upstream.unary_unary(method)

        async def handle(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            try:
                reply: bytes = await call(request, metadata=context.invocation_metadata())
            except grpc.aio.AioRpcError as error:
                await context.abort(error.code(), error.details() or "")
            return change(reply)

        return grpc.unary_unary_rpc_method_handler(handle)

    def route(method: str) -> Any:
        asked.append(method)
        change = answers.get(method)
        return forward(method, change) if change is not None else None

    try:
        async with routed_server(route) as address:
            yield address, asked
    finally:
        await upstream.close()
