from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from services.game.server import GameServer

from .harness import address, start_replicas, start_server

TEST_TIMEOUT_S = 120
"""No test of the service needs more; a hung one fails instead of stalling the run."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT_S))


@pytest.fixture
async def server(fresh_dsn: str) -> AsyncIterator[GameServer]:
    srv = await start_server(fresh_dsn)
    try:
        yield srv
    finally:
        await srv.stop(0)


@pytest.fixture
async def channel(server: GameServer) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(address(server)) as ch:
        yield ch


@pytest.fixture
async def replicas(fresh_dsn: str) -> AsyncIterator[list[GameServer]]:
    """Two game replicas on one database; a test may stop one early."""
    servers = await start_replicas(fresh_dsn, 2)
    try:
        yield servers
    finally:
        for srv in servers:
            # stop() twice is what a test that stopped a replica leaves: harmless here.
            with contextlib.suppress(Exception):
                await srv.stop(0)


@pytest.fixture
async def channels(replicas: list[GameServer]) -> AsyncIterator[list[grpc.aio.Channel]]:
    async with contextlib.AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(grpc.aio.insecure_channel(address(s))) for s in replicas
        ]
