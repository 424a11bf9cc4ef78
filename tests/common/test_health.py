"""Readiness follows PostgreSQL through the replica's own pool (real PostgreSQL)."""

from __future__ import annotations

import asyncio

import asyncpg
from grpc_health.v1 import health

from services.common.health import HealthMonitor

TIMEOUT_S = 0.5


async def test_a_pool_with_no_connection_to_spare_is_not_ready_within_the_timeout(
    fresh_dsn: str,
) -> None:
    pool = await asyncpg.create_pool(fresh_dsn, min_size=1, max_size=1)
    monitor = HealthMonitor(health.aio.HealthServicer(), pool, ["x.Game"], timeout=TIMEOUT_S)
    try:
        assert await monitor.check()
        async with pool.acquire():  # the one connection hangs on a lost server, say
            # Without a bound on the wait for a connection, this would never answer.
            async with asyncio.timeout(30):
                assert not await monitor.check()
        assert await monitor.check()
    finally:
        await pool.close()
