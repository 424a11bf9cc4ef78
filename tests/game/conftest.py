from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from services.game.server import GameServer

from .harness import start_server


@pytest.fixture
async def server(fresh_dsn: str) -> AsyncIterator[GameServer]:
    srv = await start_server(fresh_dsn)
    try:
        yield srv
    finally:
        await srv.stop(0)


@pytest.fixture
async def channel(server: GameServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        yield ch
