"""A real grpc.aio server whose handler for each method a test chooses: the
fronts that stand between a client and a real server (tests/cli/front.py,
tests/matchmaker/game_front.py) are built on it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

Route = Callable[[str], Any]
"""The handler for a method's full path (`grpc.*_rpc_method_handler`), or None
for UNIMPLEMENTED."""


@contextlib.asynccontextmanager
async def routed_server(route: Route) -> AsyncIterator[str]:
    """A server on 127.0.0.1 that asks ``route`` for each call's handler: its address."""

    class Routing(grpc.GenericRpcHandler):
        def service(self, details: Any) -> Any:
            return route(details.method)

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((Routing(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(0)
