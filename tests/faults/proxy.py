"""A TCP proxy on 127.0.0.1 that can hold or cut a connection, and the HTTP/2
frames it saw."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def h2_frames(data: bytes) -> Iterator[tuple[int, int, int, bytes]]:
    """(type, flags, stream id, payload) of each whole HTTP/2 frame in one direction."""
    pos = len(H2_PREFACE) if data.startswith(H2_PREFACE) else 0
    while pos + 9 <= len(data):
        length = int.from_bytes(data[pos : pos + 3], "big")
        kind, flags = data[pos + 3], data[pos + 4]
        stream = int.from_bytes(data[pos + 5 : pos + 9], "big") & 0x7FFFFFFF
        payload = data[pos + 9 : pos + 9 + length]
        if len(payload) < length:
            return
        yield kind, flags, stream, payload
        pos += 9 + length


def data_bytes(data: bytes, stream: int) -> int:
    """Flow-controlled bytes (DATA payloads) sent on ``stream``."""
    return sum(len(p) for kind, _, sid, p in h2_frames(data) if kind == 0 and sid == stream)


def grpc_messages(data: bytes, stream: int) -> list[bytes]:
    """The gRPC messages carried by DATA frames of ``stream`` (uncompressed)."""
    body = b""
    for kind, flags, sid, payload in h2_frames(data):
        if kind == 0 and sid == stream:
            if flags & 0x8:  # PADDED
                payload = payload[1 : len(payload) - payload[0]]
            body += payload
    messages = []
    while len(body) >= 5:
        assert body[0] == 0, "a compressed message"
        length = int.from_bytes(body[1:5], "big")
        if len(body) < 5 + length:
            break
        messages.append(body[5 : 5 + length])
        body = body[5 + length :]
    return messages


def initial_window(data: bytes) -> int:
    """The INITIAL_WINDOW_SIZE a client announced in its first SETTINGS frame."""
    for kind, _, _, payload in h2_frames(data):
        if kind == 4:  # SETTINGS
            settings = {
                int.from_bytes(payload[i : i + 2], "big"): int.from_bytes(
                    payload[i + 2 : i + 6], "big"
                )
                for i in range(0, len(payload), 6)
            }
            return settings.get(4, 65_535)
    raise AssertionError("no SETTINGS frame")


def stream_carrying(data: bytes, marker: bytes) -> int | None:
    """The stream id whose DATA frame contains ``marker``."""
    for kind, _, sid, payload in h2_frames(data):
        if kind == 0 and marker in payload:
            return sid
    return None


@dataclass(eq=False)
class Link:
    """One proxied connection, with everything each side sent."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    up: bytearray = field(default_factory=bytearray)
    down: bytearray = field(default_factory=bytearray)
    holding: bool = False
    """Server bytes are read and kept, not passed on: the client hears nothing."""
    held: bytearray = field(default_factory=bytearray)
    passed: int = 0
    """Server bytes handed to the client so far."""
    cut: bool = False

    def abort(self) -> None:
        self.cut = True
        self.client.transport.abort()
        self.server.transport.abort()


class Proxy:
    """A TCP proxy on 127.0.0.1 in front of one server. It can hold what the server
    sends (a stalled network), and cut connections (RST both ways) when the test
    says, or as soon as a marker goes by in the client's bytes."""

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self._target = (host, int(port))
        self._server: asyncio.Server | None = None
        self.links: list[Link] = []
        self.hold_new = False
        self._armed: tuple[bytes, str, asyncio.Future[Link]] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}"

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in self.links:
            link.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    def arm(self, marker: bytes, mode: str) -> asyncio.Future[Link]:
        """On the next client bytes holding ``marker``: ``"before"`` drops them and
        cuts the connection (the request never reaches the server); ``"after"``
        passes them on and from then holds what the server sends back."""
        assert mode in ("before", "after")
        future: asyncio.Future[Link] = asyncio.get_running_loop().create_future()
        self._armed = (marker, mode, future)
        return future

    def hold(self) -> None:
        self.hold_new = True
        for link in self.links:
            link.holding = True

    def release(self) -> None:
        self.hold_new = False
        for link in self.links:
            link.holding = False
            if link.held and not link.cut and not link.client.is_closing():
                link.client.write(bytes(link.held))
                link.passed += len(link.held)
            link.held.clear()

    def cut(self) -> None:
        for link in self.links:
            link.abort()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.transport.abort()
            return
        link = Link(writer, up_writer, holding=self.hold_new)
        self.links.append(link)
        for pump in (self._upstream(link, reader), self._downstream(link, up_reader)):
            task = asyncio.create_task(pump)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _upstream(self, link: Link, reader: asyncio.StreamReader) -> None:
        tail = b""
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while not link.cut and (chunk := await reader.read(65536)):
                armed = self._armed
                if armed is not None and armed[0] in tail + chunk:
                    self._armed = None
                    _, mode, future = armed
                    if mode == "before":
                        link.abort()
                        future.set_result(link)
                        return
                    link.holding = True
                    link.up += chunk
                    link.server.write(chunk)
                    future.set_result(link)
                else:
                    link.up += chunk
                    link.server.write(chunk)
                tail = chunk[-256:]
                await link.server.drain()
        with contextlib.suppress(OSError):
            if not link.cut:
                link.server.close()

    async def _downstream(self, link: Link, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while not link.cut and (chunk := await reader.read(65536)):
                link.down += chunk
                if link.holding:
                    link.held += chunk
                    continue
                link.client.write(chunk)
                link.passed += len(chunk)
                await link.client.drain()
        with contextlib.suppress(OSError):
            if not link.cut:
                link.client.close()
