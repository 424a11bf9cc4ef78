"""A game server and matchmaker replicas on one fresh database, and queueing clients."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import grpc

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import matchmaker_pb2_grpc
from services.game.server import GameServer
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer
from tests.game.harness import SECRET, Player, login, start_server


@dataclass
class Backend:
    game: GameServer
    matchmakers: list[MatchmakerServer]
    channels: list[grpc.aio.Channel] = field(default_factory=list)

    def channel(self, replica: int = 0) -> grpc.aio.Channel:
        return self.channels[replica]


@asynccontextmanager
async def backend(dsn: str, *, replicas: int = 1, ttl_s: float = 300.0,
                  matching: bool = True, bot_delay_ms: int = 0) -> AsyncIterator[Backend]:
    game = await start_server(dsn, bot_delay_ms=bot_delay_ms)
    servers = []
    for _ in range(replicas):
        server = MatchmakerServer(MatchmakerConfig(
            dsn=dsn, secret=SECRET, game_target=f"127.0.0.1:{game.port}",
            ticket_ttl_s=ttl_s, match_interval=0.02))
        await server.start(matching=matching)
        servers.append(server)
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{s.port}") for s in servers]
    try:
        yield Backend(game, servers, channels)
    finally:
        for ch in channels:
            await ch.close()
        for s in servers:
            await s.stop(0)
        await game.stop(0)


def stub(player: Player) -> matchmaker_pb2_grpc.MatchmakerServiceStub:
    return matchmaker_pb2_grpc.MatchmakerServiceStub(player.channel)


async def queue_until_match(player: Player, request: mm.EnqueueRequest,
                            timeout: float = 20.0) -> tuple[list[mm.EnqueueResponse], mm.Match]:
    """Enqueue and read the stream to its end; the match is the last message."""
    updates: list[mm.EnqueueResponse] = []

    async def read() -> None:
        async for update in stub(player).Enqueue(request, metadata=player.auth):
            updates.append(update)

    await asyncio.wait_for(read(), timeout)
    last = updates[-1]
    assert last.WhichOneof("update") == "match", updates
    return updates, last.match


async def players(channel: grpc.aio.Channel, n: int, prefix: str = "P") -> list[Player]:
    return list(await asyncio.gather(*(login(channel, f"{prefix}{i}") for i in range(n))))
