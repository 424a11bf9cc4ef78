"""What the Kubernetes probes ask, answered by a real `rummy-game` process.

Liveness (and the startup probe) ask the health name `LIVENESS`, which says only
that the process is up; readiness asks the server's health (""), which follows
PostgreSQL. So a database outage takes replicas out of rotation but never gets
them restarted, and a pod started while the database is away waits for it
instead of exiting. The database is reached through a TCP switch the test
turns off and on."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.db.migrations import LOCK_KEY as MIGRATION_LOCK_KEY
from services.common.health import LIVENESS
from tests.faults.processes import GAME_LAUNCH, free_port

from .support import REPO

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
WAIT_S = 60.0
"""Bounds every wait for a health change, so a stuck server fails the test."""


class Switch:
    """A TCP forwarder to PostgreSQL: off is an outage (every connection cut)."""

    def __init__(self, dsn: str) -> None:
        parts = urlsplit(dsn)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self.port = free_port()
        netloc = parts.netloc.rpartition("@")
        self.dsn = urlunsplit(parts._replace(netloc=f"{netloc[0]}{netloc[1]}127.0.0.1:{self.port}"))
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._pipes: set[asyncio.Task[None]] = set()

    async def on(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def off(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in self._writers:
            writer.close()
        for task in self._pipes:
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)
        self._writers.clear()
        self._pipes.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self._target)
        self._writers.update((writer, up_writer))
        pipes = [
            asyncio.create_task(self._pipe(reader, up_writer)),
            asyncio.create_task(self._pipe(up_reader, writer)),
        ]
        self._pipes.update(pipes)
        await asyncio.gather(*pipes, return_exceptions=True)

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()


@contextlib.contextmanager
def game_process(dsn: str, address: str, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """`rummy-game` on ``address``; stopped with SIGTERM, as Kubernetes does."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": dsn,
        "RUMMY_TOKEN_SECRET": "probe-tests-token-secret-that-is-long-enough",
        "RUMMY_GAME_LISTEN": address,
        "RUMMY_GAME_METRICS_PORT": "0",
        "RUMMY_LOG_FORMAT": "json",
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", GAME_LAUNCH], cwd=REPO, env=env, stdout=out, stderr=out
        )
        try:
            yield process
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.asynccontextmanager
async def health_of(address: str) -> AsyncIterator[health_pb2_grpc.HealthStub]:
    async with grpc.aio.insecure_channel(address) as channel:
        yield health_pb2_grpc.HealthStub(channel)


async def status(stub: health_pb2_grpc.HealthStub, service: str) -> int | None:
    """The health of ``service``, or None while nothing answers."""
    try:
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
    except grpc.aio.AioRpcError:
        return None
    value: int = reply.status
    return value


async def until(stub: health_pb2_grpc.HealthStub, live: int, ready: int, log: Path) -> None:
    """Wait until liveness and readiness answer ``live`` and ``ready``."""
    try:
        async with asyncio.timeout(WAIT_S):
            while (await status(stub, LIVENESS), await status(stub, "")) != (live, ready):
                await asyncio.sleep(0.2)
    except TimeoutError:
        raise AssertionError(f"health never became {live}/{ready}:\n{log.read_text()}") from None


@pytest.mark.timeout(240)
async def test_an_outage_makes_a_replica_unready_but_never_dead(
    fresh_dsn: str, tmp_path: Path
) -> None:
    switch = Switch(fresh_dsn)
    address = f"127.0.0.1:{free_port()}"
    log = tmp_path / "game.log"
    # Started while the database is away: the process waits, alive and not ready.
    with game_process(switch.dsn, address, log) as process:
        try:
            async with health_of(address) as stub:
                await until(stub, SERVING, NOT_SERVING, log)
                assert process.poll() is None
                await switch.on()
                await until(stub, SERVING, SERVING, log)
                # An outage once it runs: out of rotation, still alive.
                await switch.off()
                await until(stub, SERVING, NOT_SERVING, log)
                await switch.on()
                await until(stub, SERVING, SERVING, log)
        finally:
            await switch.off()
    assert process.returncode == 0, log.read_text()
    start_up = log.read_text().partition("game_server_started")[0]
    assert "database_unreachable_at_start" in start_up and "Traceback" not in start_up


@pytest.mark.timeout(240)
async def test_a_replica_waiting_for_another_s_migration_is_alive_and_not_ready(
    fresh_dsn: str, tmp_path: Path
) -> None:
    address = f"127.0.0.1:{free_port()}"
    log = tmp_path / "game.log"
    migrating = await asyncpg.connect(fresh_dsn)  # holds the lock, as a long migration does
    try:
        await migrating.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK_KEY)
        with game_process(fresh_dsn, address, log) as process:
            async with health_of(address) as stub:
                await until(stub, SERVING, NOT_SERVING, log)
                assert process.poll() is None
                await migrating.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK_KEY)
                await until(stub, SERVING, SERVING, log)
    finally:
        await migrating.close()
    assert process.returncode == 0, log.read_text()
