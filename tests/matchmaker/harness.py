"""A game server and matchmaker replicas on one fresh database, and queueing clients.

`Waiter` holds one waiting stream (Enqueue, CreatePrivateTable or
JoinPrivateTable) and reads it at the test's pace; `refusal` reads the status
and ErrorInfo a refused call ends with; `Store` reads what the services wrote.
Every wait is bounded, so a stuck service fails a test instead of stalling it.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import grpc
import pytest
from google.rpc import error_details_pb2

from services.common.errors import error_info
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import matchmaker_pb2_grpc
from services.game.server import GameServer
from services.matchmaker.matcher import Matcher
from services.matchmaker.server import LISTEN_ANSWER_S, MatchmakerConfig, MatchmakerServer
from tests.game.harness import SECRET, UNLIMITED, Player, login, start_server

WAIT_S = 30.0
"""Bounds every wait for a stream message or a database condition."""


@dataclass
class Backend:
    dsn: str
    game: GameServer
    matchmakers: list[MatchmakerServer]
    channels: list[grpc.aio.Channel] = field(default_factory=list)
    ttl_s: float = 300.0

    def channel(self, replica: int = 0) -> grpc.aio.Channel:
        return self.channels[replica]

    @property
    def game_target(self) -> str:
        return f"127.0.0.1:{self.game.port}"

    async def add_replica(
        self,
        *,
        game_target: str = "",
        matching: bool = True,
        dsn: str = "",
        listen_answer_s: float = LISTEN_ANSWER_S,
        **config: Any,
    ) -> int:
        """Start one more matchmaker replica (on ``dsn``, if given: a proxy's); its
        index. ``config``: more of its `MatchmakerConfig`."""
        server = MatchmakerServer(
            MatchmakerConfig(
                dsn=dsn or self.dsn,
                secret=SECRET,
                game_target=game_target or self.game_target,
                public_game_target=self.game_target,
                ticket_ttl_s=self.ttl_s,
                match_interval=0.02,
                listen_answer_s=listen_answer_s,
                limits=UNLIMITED,
                **config,
            )
        )
        await server.start(matching=matching)
        self.matchmakers.append(server)
        self.channels.append(grpc.aio.insecure_channel(f"127.0.0.1:{server.port}"))
        return len(self.matchmakers) - 1

    def matcher(self, replica: int = 0) -> Matcher:
        """A replica's matcher: tests started with ``matching=False`` run its passes."""
        matcher = self.matchmakers[replica].matcher
        assert matcher is not None
        return matcher

    async def stop_replica(self, replica: int) -> None:
        await self.matchmakers[replica].stop(0)


@asynccontextmanager
async def backend(
    dsn: str,
    *,
    replicas: int = 1,
    ttl_s: float = 300.0,
    matching: bool = True,
    bot_delay_ms: int = 0,
) -> AsyncIterator[Backend]:
    game = await start_server(dsn, bot_delay_ms=bot_delay_ms)
    b = Backend(dsn, game, [], ttl_s=ttl_s)
    try:
        for _ in range(replicas):
            await b.add_replica(matching=matching)
        yield b
    finally:
        for ch in b.channels:
            await ch.close()
        for s in b.matchmakers:
            # A test may have stopped a replica already.
            with contextlib.suppress(Exception):
                await s.stop(0)
        await game.stop(0)


def stub(player: Player) -> matchmaker_pb2_grpc.MatchmakerServiceAsyncStub:
    return matchmaker_pb2_grpc.MatchmakerServiceStub(player.channel)


async def players(channel: grpc.aio.Channel, n: int, prefix: str = "P") -> list[Player]:
    return list(await asyncio.gather(*(login(channel, f"{prefix}{i}") for i in range(n))))


def on(player: Player, channel: grpc.aio.Channel) -> Player:
    """The same signed-in player, talking to another endpoint."""
    return Player(channel, player.token, player.player_id, player.name)


# --- waiting streams ------------------------------------------------------------


@dataclass
class Waiter:
    """One waiting stream whose first message (the ticket) has arrived."""

    call: Any
    ticket: mm.Ticket
    updates: list[Any] = field(default_factory=list)

    @property
    def ticket_id(self) -> str:
        return self.ticket.ticket_id

    async def next(self, timeout: float = WAIT_S) -> Any | None:
        """The next update, or None once the stream ended with OK."""
        update = await asyncio.wait_for(self.call.read(), timeout)
        if update is grpc.aio.EOF:
            return None
        self.updates.append(update)
        return update

    async def end(self, timeout: float = WAIT_S) -> list[Any]:
        """Every update up to the end of the stream, which must end with OK."""
        async with asyncio.timeout(timeout):
            while await self.next() is not None:
                pass
        assert await self.call.code() == grpc.StatusCode.OK
        return self.updates

    async def until(self, kind: str, timeout: float = WAIT_S) -> Any:
        """The next update of one kind ("ticket", "progress", "match")."""
        async with asyncio.timeout(timeout):
            while True:
                update = await self.next()
                assert update is not None, f"the stream ended before a {kind}"
                if update.WhichOneof("update") == kind:
                    return getattr(update, kind)

    @property
    def final(self) -> mm.Ticket:
        """The last Ticket message the stream sent."""
        tickets = [u.ticket for u in self.updates if u.WhichOneof("update") == "ticket"]
        return tickets[-1] if tickets else self.ticket

    @property
    def match(self) -> mm.Match | None:
        last = self.updates[-1] if self.updates else None
        return last.match if last is not None and last.WhichOneof("update") == "match" else None

    def drop(self) -> None:
        """The client goes away: the call is cancelled."""
        self.call.cancel()


async def wait_on(call: Any, timeout: float = WAIT_S) -> Waiter:
    first = await asyncio.wait_for(call.read(), timeout)
    assert first is not grpc.aio.EOF, "the stream ended before the ticket"
    assert first.WhichOneof("update") == "ticket", first
    return Waiter(call, first.ticket)


async def enqueue(player: Player, timeout: float = WAIT_S, **request: Any) -> Waiter:
    call = stub(player).Enqueue(mm.EnqueueRequest(**request), metadata=player.auth)
    return await wait_on(call, timeout)


async def host(player: Player, **request: Any) -> Waiter:
    call = stub(player).CreatePrivateTable(
        mm.CreatePrivateTableRequest(**request), metadata=player.auth
    )
    return await wait_on(call)


async def join(player: Player, code: str) -> Waiter:
    call = stub(player).JoinPrivateTable(
        mm.JoinPrivateTableRequest(invite_code=code), metadata=player.auth
    )
    return await wait_on(call)


async def queue_until_match(
    player: Player, request: mm.EnqueueRequest, timeout: float = WAIT_S
) -> tuple[list[mm.EnqueueResponse], mm.Match]:
    """Enqueue and read the stream to its end; the match is the last message."""
    updates: list[mm.EnqueueResponse] = []

    async def read() -> None:
        async for update in stub(player).Enqueue(request, metadata=player.auth):
            updates.append(update)

    await asyncio.wait_for(read(), timeout)
    last = updates[-1]
    assert last.WhichOneof("update") == "match", updates
    return updates, last.match


async def get_ticket(player: Player, ticket_id: str) -> mm.Ticket:
    reply = await stub(player).GetTicket(
        mm.GetTicketRequest(ticket_id=ticket_id), metadata=player.auth, timeout=WAIT_S
    )
    return reply.ticket


async def cancel(player: Player, ticket_id: str) -> mm.Ticket:
    reply = await stub(player).Cancel(
        mm.CancelRequest(ticket_id=ticket_id), metadata=player.auth, timeout=WAIT_S
    )
    return reply.ticket


async def refusal(call: Awaitable[Any]) -> tuple[grpc.StatusCode, error_details_pb2.ErrorInfo]:
    """The status code and ErrorInfo a call failed with; it must fail, with an ErrorInfo."""
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await asyncio.wait_for(call, WAIT_S)
    info = error_info(failure.value)
    assert info is not None, f"no ErrorInfo in {failure.value!r}"
    assert info.domain == "rummy.v1"
    assert failure.value.details(), "a refusal says why in a sentence"
    return failure.value.code(), info


# --- what the services stored ------------------------------------------------------


class Store:
    """Reads the matchmaker's and game service's rows behind their backs."""

    def __init__(self, con: asyncpg.Connection) -> None:
        self.con = con

    async def ticket(self, ticket_id: str) -> asyncpg.Record:
        row = await self.con.fetchrow("SELECT * FROM tickets WHERE id = $1", uuid.UUID(ticket_id))
        assert row is not None, f"no ticket {ticket_id}"
        return row

    async def state(self, ticket_id: str) -> str:
        return str((await self.ticket(ticket_id))["state"])

    async def count(self, query: str, *args: Any) -> int:
        return int(await self.con.fetchval(query, *args))

    async def seats(self, table_id: str) -> list[asyncpg.Record]:
        return list(
            await self.con.fetch(
                "SELECT seat, player_id, is_bot, left_at FROM table_seats WHERE table_id = $1"
                " ORDER BY seat",
                uuid.UUID(table_id),
            )
        )

    async def backdate(self, ticket_id: str, seconds: float) -> None:
        """Make a ticket look ``seconds`` older: a wait passes without a test sleeping."""
        await self.con.execute(
            "UPDATE tickets SET created_at = created_at - make_interval(secs => $2) WHERE id = $1",
            uuid.UUID(ticket_id),
            seconds,
        )

    async def eventually(
        self,
        check: Callable[[Store], Awaitable[bool]],
        what: str,
        timeout: float = WAIT_S,
    ) -> None:
        """Poll until ``check`` holds; fail naming ``what`` if it never does."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not await check(self):
            assert loop.time() < deadline, f"never happened: {what}"
            await asyncio.sleep(0.05)


@asynccontextmanager
async def store(dsn: str) -> AsyncIterator[Store]:
    con = await asyncpg.connect(dsn)
    try:
        yield Store(con)
    finally:
        await con.close()
