"""The servers in processes of their own: the child side (`--serve game`,
`--serve matchmaker` or `--serve bare`, run by `python -m bench.matchmaker`) and
the parent's handle on one."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any

import grpc

from bench import common
from bench.matchmaker.ceilings import sample_messages
from bench.matchmaker.settings import BARE_HOLD_S, SECRET, UNLIMITED
from services.common.heap import keep_heap_small
from services.common.logs import configure
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.serving import server_options
from services.game.server import GameConfig, GameServer
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer


async def serve(args: argparse.Namespace) -> None:
    """Child process: one server until stdin closes or SIGTERM.

    A matchmaker starts with its matching loop paused; the line "match" on
    stdin starts it, "pause" stops it again."""
    configure(fmt="json", level="info")  # logging as a production replica's
    async with keep_heap_small():  # and its allocator settings (services/launch.py)
        await _run_server(args)


async def _run_server(args: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    commands: asyncio.Queue[str] = asyncio.Queue()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def read_stdin() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(commands.put_nowait, line.strip())
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=read_stdin, daemon=True).start()
    if args.serve == "bare":
        await _serve_bare(args.port_fd, stop)
        return
    server: GameServer | MatchmakerServer
    if args.serve == "game":
        server = GameServer(GameConfig(dsn=args.dsn, secret=SECRET, limits=UNLIMITED))
        await server.start()
    else:
        server = MatchmakerServer(
            MatchmakerConfig(
                dsn=args.dsn,
                secret=SECRET,
                game_target=args.game_target,
                ticket_ttl_s=3_600,
                limits=UNLIMITED,
            )
        )
        await server.start(matching=False)
    os.write(args.port_fd, f"{server.port}\n".encode())
    os.close(args.port_fd)
    matching: asyncio.Task[None] | None = None
    stopping = asyncio.create_task(stop.wait())
    while not stop.is_set():
        command = asyncio.create_task(commands.get())
        await asyncio.wait({command, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not command.done():
            command.cancel()
            break
        if isinstance(server, MatchmakerServer) and server.matcher is not None:
            if command.result() == "match" and matching is None:
                matching = asyncio.create_task(server.matcher.run())
            elif command.result() == "pause" and matching is not None:
                matching.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await matching
                matching = None
    if matching is not None:
        matching.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await matching
    await server.stop(0)


def _bare_enqueue() -> grpc.GenericRpcHandler:
    """Enqueue as gRPC alone serves it: the ticket at once, then after a wait its
    final state and the match, messages as big as the matchmaker's; no check, no
    database, no interceptor."""
    ticket, match = sample_messages()
    first = mm.EnqueueResponse(ticket=ticket)
    final = mm.EnqueueResponse(ticket=ticket)
    final.ticket.state = mm.TICKET_STATE_MATCHED
    final.ticket.match.CopyFrom(match)
    last = mm.EnqueueResponse(match=match)

    async def enqueue(
        _request: mm.EnqueueRequest, _context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[mm.EnqueueResponse]:
        yield first
        await asyncio.sleep(BARE_HOLD_S)
        yield final
        yield last

    return grpc.method_handlers_generic_handler(
        "rummy.v1.MatchmakerService",
        {
            "Enqueue": grpc.unary_stream_rpc_method_handler(
                enqueue,
                request_deserializer=mm.EnqueueRequest.FromString,
                response_serializer=mm.EnqueueResponse.SerializeToString,
            )
        },
    )


async def _serve_bare(port_fd: int, stop: asyncio.Event) -> None:
    server = grpc.aio.server(options=server_options())  # the services' own
    server.add_generic_rpc_handlers((_bare_enqueue(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    os.write(port_fd, f"{port}\n".encode())
    os.close(port_fd)
    await stop.wait()
    await server.stop(0)


class Child(common.Child):
    """One server (`game` or `matchmaker`) in its own process; see `bench.common.Child`."""

    def __init__(self, role: str, dsn: str, *extra: str) -> None:
        super().__init__("bench.matchmaker", role, dsn, *extra, env={"RUMMY_LOG_LEVEL": "warning"})
