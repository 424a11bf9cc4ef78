"""A TCP relay in front of PostgreSQL that a test can take down and bring back.

While down, every relayed connection is reset and new ones are reset as soon as
they arrive: to the servers behind it the database has gone away (a failover, a
network partition). It can also reset the one connection whose client sends a
given statement, once. Listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit


@dataclass(eq=False)
class _Relay:
    client: asyncio.StreamWriter
    server: asyncio.StreamWriter

    def reset(self) -> None:
        self.client.transport.abort()
        self.server.transport.abort()


class DatabaseProxy:
    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        parts = urlsplit(dsn)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._listener: asyncio.Server | None = None
        self._relays: set[_Relay] = set()
        self._pumps: set[asyncio.Task[None]] = set()
        self._doomed: bytes | None = None
        self.down = False
        self.resets = 0
        """Connections reset because of `drop_statement`."""

    async def start(self) -> str:
        """Start relaying; the DSN that goes through this proxy."""
        self._listener = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._listener.sockets[0].getsockname()[1]
        parts = urlsplit(self._dsn)
        credentials, at, _ = parts.netloc.rpartition("@")
        return urlunsplit(parts._replace(netloc=f"{credentials}{at}127.0.0.1:{port}"))

    def cut(self) -> None:
        """The database goes away: open connections are reset, new ones refused."""
        self.down = True
        for relay in list(self._relays):
            relay.reset()
        self._relays.clear()

    def restore(self) -> None:
        self.down = False

    def drop_statement(self, statement: bytes) -> None:
        """Reset the next connection whose client sends ``statement``, before it
        reaches the database."""
        self._doomed = statement

    async def close(self) -> None:
        self.cut()
        if self._listener is not None:
            self._listener.close()
        for pump in list(self._pumps):
            pump.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.down:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            writer.transport.abort()
            return
        relay = _Relay(writer, up_writer)
        self._relays.add(relay)
        for pump in (self._to_server(relay, reader), self._to_client(relay, up_reader)):
            task = asyncio.create_task(pump)
            self._pumps.add(task)
            task.add_done_callback(self._pumps.discard)

    async def _to_server(self, relay: _Relay, reader: asyncio.StreamReader) -> None:
        tail = b""  # a statement may arrive in two reads
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while chunk := await reader.read(65536):
                if self._doomed is not None and self._doomed in tail + chunk:
                    self._doomed = None
                    self.resets += 1
                    relay.reset()
                    self._relays.discard(relay)
                    return
                relay.server.write(chunk)
                tail = chunk[-256:]
                await relay.server.drain()
        with contextlib.suppress(OSError):
            relay.server.close()

    async def _to_client(self, relay: _Relay, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while chunk := await reader.read(65536):
                relay.client.write(chunk)
                await relay.client.drain()
        with contextlib.suppress(OSError):
            relay.client.close()


@contextlib.asynccontextmanager
async def database_proxy(dsn: str) -> AsyncIterator[tuple[DatabaseProxy, str]]:
    """A proxy in front of ``dsn``, and the DSN through it; closed on exit."""
    proxy = DatabaseProxy(dsn)
    proxied = await proxy.start()
    try:
        yield proxy, proxied
    finally:
        await proxy.close()
