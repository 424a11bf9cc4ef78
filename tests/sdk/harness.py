"""The TypeScript SDK's package, built, and a control channel its tests use to
restart the game server in the middle of a game.

The Node tests run in a subprocess while the servers run in the test's event
loop. A Node test asks for a restart with an HTTP POST to the control endpoint
(`/stop-game`, `/start-game`, `/restart-game`); the endpoint answers once it is
done, so the Node side knows the server is down (or back) when its request
returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from tests.cli.harness import Servers
from tests.game.harness import start_server

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"
TSC = PACKAGE / "node_modules" / ".bin" / "tsc"
PINS = (PACKAGE / "package.json", PACKAGE / "package-lock.json")
NPM_TIMEOUT_S = 300


def _run(*command: str, timeout: float) -> None:
    done = subprocess.run(
        command, cwd=PACKAGE, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}"


def build() -> None:
    """Install the package's pinned dependencies if they are missing or older
    than its pins (`npm ci`, as `make test` does first), then compile it (tsc)."""
    if not TSC.exists() or any(TSC.stat().st_mtime < pin.stat().st_mtime for pin in PINS):
        _run("npm", "ci", "--no-audit", "--no-fund", timeout=NPM_TIMEOUT_S)
        TSC.touch()
    _run(str(TSC), "-p", "tsconfig.json", timeout=NPM_TIMEOUT_S)


class GameControl:
    """Stops and starts the game server of ``running`` on its port."""

    def __init__(self, running: Servers) -> None:
        self.running = running
        self.port = running.game.port
        self.stopped = False

    async def stop(self) -> None:
        if not self.stopped:
            await self.running.game.stop(0)
            self.stopped = True

    async def start(self) -> None:
        if self.stopped:
            self.running.game = await start_server(
                self.running.dsn,
                bot_delay_ms=self.running.bot_delay_ms,
                address=f"127.0.0.1:{self.port}",
                limits=self.running.game_limits,
            )
            self.stopped = False

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    def actions(self) -> dict[str, Callable[[], Awaitable[None]]]:
        return {"stop-game": self.stop, "start-game": self.start, "restart-game": self.restart}


async def _answer(
    actions: dict[str, Callable[[], Awaitable[None]]],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    """One HTTP/1.1 request: `POST /ACTION`; 200 once done, 404 for another path."""
    try:
        request_line = (await reader.readline()).decode("latin-1").split()
        while (await reader.readline()).strip():
            pass  # the headers (the requests have no body)
        path = request_line[1] if len(request_line) > 1 else ""
        action = actions.get(path.lstrip("/"))
        if action is None:
            status, body = "404 Not Found", f"no action {path}"
        else:
            await action()
            status, body = "200 OK", "done"
        payload = body.encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Length: {len(payload)}\r\n"
            "Connection: close\r\n\r\n".encode()
            + payload
        )
        await writer.drain()
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


@asynccontextmanager
async def control_endpoint(running: Servers) -> AsyncIterator[str]:
    """An HTTP endpoint on this machine that stops and starts the game server;
    its base URL. The game server is left running when it closes."""
    control = GameControl(running)
    actions = control.actions()
    server = await asyncio.start_server(
        lambda reader, writer: _answer(actions, reader, writer), "127.0.0.1", 0
    )
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        await server.wait_closed()
        await control.start()
