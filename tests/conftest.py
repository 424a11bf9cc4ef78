"""Shared fixtures: one PostgreSQL server per test run, a fresh database per test.

With DATABASE_URL set, its server is used (the URL's role needs CREATEDB);
otherwise one embedded server is started in a temporary folder.
"""

from __future__ import annotations

import os

# The tests start servers (PostgreSQL, the CLI, other replicas) from a process
# that runs gRPC threads; gRPC's fork handlers can then crash the forked child
# before it execs. Nothing here forks to run gRPC, so turn them off, before any
# gRPC import.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator

import asyncpg
import pytest
from hypothesis import settings

from services.common import eventloop
from services.common.db import EmbeddedPostgres, Pool, migrate, open_pool, with_database

# Property tests explore new examples on every local run; in CI they replay the
# same ones, so a submission's verdict does not depend on the seed it drew.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> dict[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Async tests run on the event loop the servers run on in production."""
    return {"loop": eventloop.new_loop}


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    url = os.environ.get("DATABASE_URL", "").strip()
    if url:
        yield url
        return
    with EmbeddedPostgres.temporary() as dsn:
        yield dsn


@pytest.fixture
async def fresh_dsn(database_url: str) -> AsyncIterator[str]:
    """DSN of a new, empty database on the test server, dropped afterwards."""
    name = f"test_{uuid.uuid4().hex[:20]}"
    await _admin(database_url, f'CREATE DATABASE "{name}"')
    try:
        yield with_database(database_url, name)
    finally:
        # FORCE: a test that leaked a connection must not leak the database too.
        await _admin(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
async def pool(fresh_dsn: str) -> AsyncIterator[Pool]:
    """A pool on a fresh database with every migration applied."""
    pool = await open_pool(fresh_dsn, max_size=6)
    try:
        await migrate(pool)
        yield pool
    finally:
        await pool.close()


async def _admin(dsn: str, statement: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "long: a test that takes a minute or more of waiting; run first"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first: on several workers (`make test`), one started last
    would hold up the end of the run while the other workers sit idle."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
