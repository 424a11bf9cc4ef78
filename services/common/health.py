"""gRPC health that follows the database: NOT_SERVING while PostgreSQL is out of
reach and during shutdown, SERVING otherwise, for every service of a server.

One name does not follow the database: `LIVENESS` answers SERVING for as long as
the process runs (until shutdown). Readiness asks the others, so a replica that
cannot reach PostgreSQL leaves the load balancer; liveness asks `LIVENESS`, so a
database outage, however long, never gets every replica restarted (which would
not bring PostgreSQL back). A process too wedged to answer still fails it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence

import asyncpg
import structlog
from grpc_health.v1 import health, health_pb2

from .db import Pool
from .errors import DB_ERRORS
from .metrics import DB_POOL

log = structlog.get_logger(__name__)
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
LIVENESS = "rummy.liveness"
"""The health service name liveness probes ask (Kubernetes `grpc.service`)."""


class HealthMonitor:
    def __init__(
        self,
        servicer: health.aio.HealthServicer,
        pool: Pool,
        services: Sequence[str],
        *,
        interval: float = 1.0,
        timeout: float = 2.0,
    ) -> None:
        self._servicer = servicer
        self._pool = pool
        self._services = ("", *services)
        self._interval = interval
        self._timeout = timeout
        self._task: asyncio.Task[None] | None = None
        self.serving: bool | None = None

    async def set(self, serving: bool) -> None:
        if serving != self.serving:
            log.info("health_changed", serving=serving)
        self.serving = serving
        for name in self._services:
            await self._servicer.set(name, SERVING if serving else NOT_SERVING)

    async def check(self) -> bool:
        """PostgreSQL answered within the timeout, the wait for a connection included
        (a pool whose connections all hang on a lost server would otherwise keep
        the replica SERVING until the queries' own timeout, 30 s)."""
        try:
            async with asyncio.timeout(self._timeout):
                await self._pool.fetchval("SELECT 1")
            return True
        except (*DB_ERRORS, asyncpg.PostgresError, asyncpg.InternalClientError, TimeoutError):
            return False
        finally:
            pool, service = self._pool, self._services[1].rsplit(".", 1)[-1]
            DB_POOL.labels(service, "in_use").set(pool.get_size() - pool.get_idle_size())
            DB_POOL.labels(service, "idle").set(pool.get_idle_size())
            DB_POOL.labels(service, "max").set(pool.get_max_size())

    async def start(self) -> None:
        await self._servicer.set(LIVENESS, SERVING)
        await self.set(await self.check())
        self._task = asyncio.create_task(self._run(), name="health")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                await self.set(await self.check())
            except Exception:  # never stop following the database, frozen at SERVING
                log.exception("health_check_failed")
                with contextlib.suppress(Exception):
                    await self.set(False)

    async def shutdown(self) -> None:
        """Stop following the database and answer NOT_SERVING from now on."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.set(False)
        await self._servicer.enter_graceful_shutdown()
