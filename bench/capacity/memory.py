"""The memory comparison: a bare grpc.aio server (`bench.game`'s, in its own
process) holding as many connections as the game server held players, each with
one open server stream, opened by the same load processes."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from bench.capacity.loaders import Loaders
from bench.game.measure import rss_bytes
from bench.game.servers import Child
from bench.soak.measure import open_fds

OPEN_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class BareMemory:
    connections: int
    sockets: int
    base: int
    rss: int

    @property
    def per_connection(self) -> float:
        return (self.rss - self.base) / max(self.connections, 1)


async def bare_memory(loaders: Loaders, count: int) -> BareMemory:
    async with Child("bare") as bare:
        await asyncio.sleep(0.5)
        base, sockets = rss_bytes(bare.pid), open_fds(bare.pid)[1]
        target = f"127.0.0.1:{bare.port}"
        replies = await loaders.ask(
            [{"do": "bare", "target": target, "count": n} for n in loaders.share(count)],
            OPEN_TIMEOUT_S,
        )
        await asyncio.sleep(1.0)
        found = BareMemory(
            sum(r["opened"] for r in replies),
            open_fds(bare.pid)[1] - sockets,
            base,
            rss_bytes(bare.pid),
        )
        await loaders.ask({"do": "close-bare"}, OPEN_TIMEOUT_S)
    print(
        f"\n== Bare grpc.aio server: {found.connections:,} connections, one open stream each"
        f" ({found.sockets:,} more sockets) ==\n  RSS {found.rss / 2**20:,.0f} MiB,"
        f" {found.per_connection / 1024:,.1f} KiB per connection above the idle server",
        flush=True,
    )
    return found
