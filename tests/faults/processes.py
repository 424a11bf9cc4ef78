"""The fault tests' servers and clients: game servers as real processes on
127.0.0.1, channels to them, accounts, tables made with the service credential,
and waiting for a condition."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.errors import error_info
from tests.game import harness

REPO = Path(__file__).resolve().parents[2]
SECRET = "fault-tests-token-secret-that-is-long-enough"
CALL_TIMEOUT_S = 10.0
"""Bounds every single call: a hung server fails a test instead of stalling it."""
RETRY_FOR_S = 60.0
"""How long a client keeps retrying one action before the test gives up."""
START_TIMEOUT_S = 60.0
LONG_TURNS_MS = harness.LONG_TURNS_MS
"""No turn of a player times out in these tests: every version of a table they play
is one of their actions."""
BOT_TURNS_MS = 1_000
"""Tables of server bots keep a short clock: the greedy bot can be left with no legal
move (two jokers in hand, say) and then waits for its turn to time out."""
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
GAME_LAUNCH = "import sys; from services.launch import game_main; sys.exit(game_main())"
MATCHMAKER_LAUNCH = (
    "import sys; from services.launch import matchmaker_main; sys.exit(matchmaker_main())"
)


def server_env(dsn: str, secret: str, **settings: str) -> dict[str, str]:
    """The environment of a server process on ``dsn``: none of this process's own
    settings, JSON logs, and no rate limits (clients here play far faster than
    people, and hammer on purpose); ``settings`` on top."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RUMMY_", "PG")) and k != "DATABASE_URL"
    }
    env.update(
        DATABASE_URL=dsn,
        RUMMY_TOKEN_SECRET=secret,
        RUMMY_LOG_FORMAT="json",
        RUMMY_LOG_LEVEL="info",
        RUMMY_RATE_PER_PLAYER="0",
        RUMMY_RATE_PER_PEER="0",
        RUMMY_STREAMS_PER_PLAYER="0",
    )
    env.update(settings)
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def status_of(error: grpc.RpcError) -> tuple[grpc.StatusCode, str | None]:
    """The code and the ErrorInfo reason (None when the server sent none)."""
    info = error_info(error)
    return error.code(), info.reason if info is not None else None  # type: ignore[attr-defined]


async def until(
    check: Callable[[], Any], what: str, timeout: float = 30.0, every: float = 0.05
) -> Any:
    """Wait (bounded) for ``check()`` (sync or async) to return something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(every)


# --- game servers as processes ---------------------------------------------


class GameProcess:
    """One `rummy-game` replica in a process of its own, configured by environment."""

    def __init__(self, dsn: str, log_path: Path, **settings: str) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log_path = log_path
        self._env = server_env(
            dsn,
            SECRET,
            RUMMY_GAME_LISTEN=self.address,
            RUMMY_GAME_METRICS_PORT="0",
            RUMMY_ALLOW_TEST_DECKS="true",
            RUMMY_BOT_DELAY_MS="0",
            RUMMY_BOT_PACE="0",
            RUMMY_SHUTDOWN_GRACE_S="1",
            RUMMY_DB_POOL_SIZE="10",
            **settings,
        )
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-c", GAME_LAUNCH],
                cwd=REPO,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    async def health(self, channel: grpc.aio.Channel | None = None) -> int | None:
        """The overall health status, or None when the server does not answer."""
        async with contextlib.AsyncExitStack() as stack:
            if channel is None:
                channel = await stack.enter_async_context(grpc.aio.insecure_channel(self.address))
            try:
                reply = await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=""), timeout=2.0
                )
            except grpc.aio.AioRpcError:
                return None
            return int(reply.status)

    async def wait_health(self, status: int, timeout: float = START_TIMEOUT_S) -> None:
        async def reached() -> bool:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(
                    f"game server exited with {self.process.returncode}:\n{self.log_tail()}"
                )
            return await self.health() == status

        name = health_pb2.HealthCheckResponse.ServingStatus.Name(status)  # type: ignore[arg-type]
        await until(reached, f"{self.address} to be {name}", timeout, every=0.1)

    def kill(self) -> None:
        """`kill -9`: no shutdown, no goodbye to clients or to PostgreSQL."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@contextlib.asynccontextmanager
async def game_processes(
    dsn: str, count: int, log_dir: Path, **settings: str
) -> AsyncIterator[list[GameProcess]]:
    """``count`` replicas on one database, all SERVING; every one stopped on exit."""
    replicas = [GameProcess(dsn, log_dir / f"game-{i}.log", **settings) for i in range(count)]
    try:
        for replica in replicas:
            replica.start()
        await asyncio.gather(*(r.wait_health(SERVING) for r in replicas))
        yield replicas
    except BaseException:
        for replica in replicas:
            print(f"--- {replica.address} (game server) log, last lines ---\n{replica.log_tail()}")
        raise
    finally:
        for replica in replicas:
            replica.stop()


class Channels:
    """One grpc.aio channel per address, closed together."""

    def __init__(self) -> None:
        self._open: dict[str, grpc.aio.Channel] = {}

    def __call__(self, address: str) -> grpc.aio.Channel:
        return self.with_options(address, ())

    def with_options(self, address: str, options: Sequence[tuple[str, Any]]) -> grpc.aio.Channel:
        """Channels with other options are other connections."""
        key = f"{address} {sorted(options)}"
        if key not in self._open:
            self._open[key] = grpc.aio.insecure_channel(address, options=list(options))
        return self._open[key]

    async def close(self) -> None:
        for channel in self._open.values():
            await channel.close()
        self._open.clear()


@contextlib.asynccontextmanager
async def channels() -> AsyncIterator[Channels]:
    pool = Channels()
    try:
        yield pool
    finally:
        await pool.close()
