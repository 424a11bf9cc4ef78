"""The servers under test, each the real entry point in its own process, started
again after a stop to restart it."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import IO

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.soak.settings import REPO, STOP_TIMEOUT_S


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    """One server process; `start()` again after `stop()` is a restart."""

    name: str
    entry: str
    env: dict[str, str]
    port: int
    log: IO[bytes]
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def start(self) -> float:
        """Start and wait until its health check says SERVING; returns the seconds it took."""
        began = time.perf_counter()
        code = f"import sys; from services.launch import {self.entry}; sys.exit({self.entry}())"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=REPO,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
        )
        self.starts += 1
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as chan:
            stub = health_pb2_grpc.HealthStub(chan)
            while True:
                if self.process.poll() is not None:
                    raise RuntimeError(f"{self.name} exited with {self.process.returncode}")
                with contextlib.suppress(grpc.aio.AioRpcError):
                    reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1.0)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return time.perf_counter() - began
                if time.perf_counter() - began > 60:
                    raise RuntimeError(f"{self.name} did not become healthy in 60 s")
                await asyncio.sleep(0.1)

    async def stop(self) -> float:
        """SIGTERM, wait (SIGKILL after a while); returns the seconds it took."""
        began = time.perf_counter()
        process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(process.wait, STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                await asyncio.to_thread(process.wait)
        return time.perf_counter() - began
