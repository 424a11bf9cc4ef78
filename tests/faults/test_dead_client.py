"""A client whose network goes silent without closing its connection (a phone
out of coverage) loses its streams once it stops answering the server's pings,
instead of holding them for hours."""

from __future__ import annotations

import asyncio

import grpc

from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc
from tests.game.harness import create_table, login, start_server

from .processes import until
from .proxy import Proxy

KEEPALIVE_MS = 300
"""The test replica's keepalive: pinged after 0.3 s of quiet, closed 0.3 s later."""


async def test_a_silent_client_s_watch_is_closed_by_keepalive(fresh_dsn: str) -> None:
    server = await start_server(fresh_dsn, keepalive_ms=KEEPALIVE_MS)
    proxy = Proxy(f"127.0.0.1:{server.port}")
    try:
        through = await proxy.start()
        async with grpc.aio.insecure_channel(through) as channel:
            players = [await login(channel, f"P{i}") for i in range(2)]
            table_id = await create_table(channel, players, turn_timer_ms=3_600_000)
            call = game_pb2_grpc.GameServiceStub(channel).Watch(
                game_pb2.WatchRequest(table_id=table_id), metadata=players[0].auth
            )
            first = await call.read()
            assert first.event.seq == 1
            await until(lambda: server.watch_streams == 1, "the stream to be open")
            # Quiet and well: the pings are answered, the stream stays.
            await asyncio.sleep(4 * KEEPALIVE_MS / 1000)
            assert server.watch_streams == 1

            proxy.hold()  # the client's network passes nothing more to it
            await until(lambda: server.watch_streams == 0, "the server to close the stream")
            call.cancel()
    finally:
        await proxy.close()
        await server.stop(0)
