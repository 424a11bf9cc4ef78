"""The servers under test, each in its own process: the game server, and a
bare grpc.aio server (unary echo, one-message stream) to compare it with."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import grpc
from prometheus_client import start_http_server

from bench import common
from bench.game.settings import BARE_MESSAGE, BARE_SERVICE, SECRET, UNLIMITED
from services.common.heap import keep_heap_small
from services.common.logs import configure
from services.common.serving import server_options
from services.game.server import GameConfig, GameServer


async def serve(role: str, dsn: str, port_fd: int) -> None:
    """Child process: run one server until stdin closes or SIGTERM."""
    configure(fmt="json", level="info")  # logging as a production replica's
    async with keep_heap_small():  # and its allocator settings (services/launch.py)
        await _run_server(role, dsn, port_fd)


async def _run_server(role: str, dsn: str, port_fd: int) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def wait_for_parent() -> None:
        sys.stdin.buffer.read()
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=wait_for_parent, daemon=True).start()
    game: GameServer | None = None
    bare: Any = None
    metrics_port = 0
    if role == "game":
        game = GameServer(GameConfig(dsn=dsn, secret=SECRET, limits=UNLIMITED))
        await game.start()
        port = game.port
        metrics_port = start_http_server(0, addr="127.0.0.1")[0].server_port
    else:
        bare = grpc.aio.server(options=server_options())  # the services' own
        bare.add_generic_rpc_handlers((_bare_handler(),))
        port = bare.add_insecure_port("127.0.0.1:0")
        await bare.start()
    os.write(port_fd, f"{port} {metrics_port}\n".encode())
    os.close(port_fd)
    await stop.wait()
    if game is not None:
        await game.stop(0)
    if bare is not None:
        await bare.stop(0)


def _bare_handler() -> Any:
    """A unary echo; a stream that sends one message, then holds, joined to the
    group its request names; and `Act`, a unary call that also sends a message on
    every stream of its group: a move and its event to the table's watchers,
    without the game. No protobuf."""
    groups: dict[bytes, list[asyncio.Queue[bytes]]] = {}

    async def echo(request: bytes, _context: Any) -> bytes:
        return request

    async def hold(request: bytes, _context: Any) -> AsyncIterator[bytes]:
        if not request:  # in no group: an idle stream and nothing more (memory)
            yield BARE_MESSAGE
            await asyncio.get_running_loop().create_future()
        sent: asyncio.Queue[bytes] = asyncio.Queue()
        group = groups.setdefault(request, [])
        group.append(sent)
        try:
            yield BARE_MESSAGE
            while True:
                yield await sent.get()
        finally:
            group.remove(sent)
            if not group:
                groups.pop(request, None)

    async def act(request: bytes, _context: Any) -> bytes:
        for sent in groups.get(request, ()):
            sent.put_nowait(BARE_MESSAGE)
        return request

    return grpc.method_handlers_generic_handler(
        BARE_SERVICE,
        {
            "Echo": grpc.unary_unary_rpc_method_handler(echo),
            "Hold": grpc.unary_stream_rpc_method_handler(hold),
            "Act": grpc.unary_unary_rpc_method_handler(act),
        },
    )


class Child(common.Child):
    """One server (`game` or `bare`) in its own process; see `bench.common.Child`."""

    def __init__(self, role: str, dsn: str = "") -> None:
        super().__init__("bench.game", role, dsn)

    @property
    def metrics_port(self) -> int:
        """The game server's /metrics (0: none)."""
        return self.ports[1] if len(self.ports) > 1 else 0
