"""Real game servers on port 0 and real gRPC clients, for the service tests.

A client for one seat (`Client`) talks to the service only through the public
API; `Player` does it with grpcio, `tests.game.grpclib_client` with grpclib.
Both send the requests of `tests.game.requests`.
`tests.game.stored` reads what the server stored, the ground truth the tests
compare clients against (re-exported here for the other suites).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from clients.cli.viewstate import state_from_view
from services.common.auth import issue_service_token
from services.common.errors import error_info
from services.common.limits import Limits
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import (
    auth_pb2,
    auth_pb2_grpc,
    game_pb2,
    game_pb2_grpc,
    table_pb2,
)
from services.game.rules.actions import Action, Leave
from services.game.rules.bots import GreedyBot as GreedyBot
from services.game.server import GameConfig, GameServer

# The `name as name` imports are re-exports: the other suites import these from here.
from .decks import JOKERS as JOKERS
from .decks import card as card
from .decks import deck_order as deck_order
from .decks import shuffled_deck as shuffled_deck
from .requests import Sent, request_for
from .stored import Logged as Logged
from .stored import TableDb as TableDb
from .stored import table_db as table_db

SECRET = "test-secret-that-is-long-enough-for-hs256"
CALL_TIMEOUT_S = 15.0
"""Bounds every unary call, so a hung server fails a test instead of stalling it."""
WAIT_S = 30.0
"""Bounds every wait for stream events."""


LONG_TURNS_MS = 3_600_000
"""A turn clock no test outlasts: every version of such a table is a client's action."""

BOT_DELAY_MS = 20
"""Bots think for 800 ms in production so people can follow; tests need not wait."""
BOT_PACE = 0.0
"""Bots play each turn whole, after BOT_DELAY_MS: the tests of the pace set their own."""


UNLIMITED = Limits(player_rate=0, peer_rate=0, streams_per_player=0, streams_per_replica=0)
"""Test clients share channels and play as fast as they can: the limits have
tests of their own (tests/abuse)."""


async def start_server(dsn: str, **overrides: object) -> GameServer:
    settings: dict[str, Any] = {
        "secret": SECRET,
        "allow_test_decks": True,
        "bot_delay_ms": BOT_DELAY_MS,
        "bot_pace": BOT_PACE,
        "limits": UNLIMITED,
    }
    settings.update(overrides)
    server = GameServer(GameConfig(dsn=dsn, **settings))
    await server.start()
    return server


async def start_replicas(dsn: str, count: int = 2, **overrides: object) -> list[GameServer]:
    """``count`` replicas on one database, started together (migrations race too)."""
    return list(await asyncio.gather(*(start_server(dsn, **overrides) for _ in range(count))))


def address(server: GameServer) -> str:
    return f"127.0.0.1:{server.port}"


class Client:
    """One signed-in player; subclasses say how a call travels."""

    player_id: str
    name: str
    seat: int | None = None
    sent: list[Sent]

    async def call(self, method: str, request: Message) -> Any:
        raise NotImplementedError

    async def view(self, table_id: str) -> table_pb2.TableView:
        reply = await self.call("GetTable", game_pb2.GetTableRequest(table_id=table_id))
        view: table_pb2.TableView = reply.view
        if view.HasField("my_seat"):
            self.seat = view.my_seat
        return view

    async def send(
        self,
        table_id: str,
        action: Action,
        *,
        request_id: str | None = None,
        expected_version: int | None = None,
    ) -> Any:
        """Send one engine action through the matching RPC; returns the whole response.

        Every action carries a request id (a fresh one unless given), so a test can
        retry it and find it in the log."""
        request_id = request_id or uuid.uuid4().hex
        common: dict[str, Any] = {"request_id": request_id}
        if expected_version is not None:
            common["expected_version"] = expected_version
        method, request = request_for(table_id, action, **common)
        reply = await self.call(method, request)
        if reply.view.HasField("my_seat"):
            self.seat = reply.view.my_seat
        assert self.seat is not None
        self.sent.append(Sent(request_id, action, reply.version, self.seat, reply))
        return reply


@dataclass(eq=False)
class Player(Client):
    """A player talking grpcio to one replica; `use` moves it to another."""

    channel: grpc.aio.Channel
    token: str
    player_id: str
    name: str
    seat: int | None = None
    sent: list[Sent] = field(default_factory=list)
    game: game_pb2_grpc.GameServiceAsyncStub = field(init=False)

    def __post_init__(self) -> None:
        self.use(self.channel)

    def use(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.game = game_pb2_grpc.GameServiceStub(channel)

    @property
    def auth(self) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {self.token}"),)

    async def call(self, method: str, request: Message) -> Any:
        stub = getattr(self.game, method)
        return await stub(request, metadata=self.auth, timeout=CALL_TIMEOUT_S)

    def watch(self, table_id: str, after: int = 0) -> Watcher:
        call = self.game.Watch(
            game_pb2.WatchRequest(table_id=table_id, after_seq=after), metadata=self.auth
        )
        return Watcher(call)


async def login(channel: grpc.aio.Channel, name: str) -> Player:
    stub = auth_pb2_grpc.AuthServiceStub(channel)
    reply = await stub.Login(
        auth_pb2.LoginRequest(device_id=f"device-{uuid.uuid4().hex}", display_name=name),
        timeout=CALL_TIMEOUT_S,
    )
    return Player(channel, reply.token, reply.player_id, name)


def service_auth() -> tuple[tuple[str, str]]:
    token = issue_service_token("matchmaker", secret=SECRET, now=time.time())
    return (("authorization", f"Bearer {token}"),)


def create_request(
    players: Sequence[Client],
    *,
    deck_order: Sequence[int] = (),
    ruleset: str = "cafe",
    **options: int,
) -> tables_pb2.CreateTableRequest:
    return tables_pb2.CreateTableRequest(
        ruleset=ruleset,
        options=table_pb2.TableOptions(**options),
        players=[
            tables_pb2.SeatedPlayer(player_id=p.player_id, display_name=p.name) for p in players
        ],
        deck_order=deck_order,
    )


async def create_table(
    channel: grpc.aio.Channel,
    players: Sequence[Client],
    *,
    deck_order: Sequence[int] = (),
    ruleset: str = "cafe",
    **options: int,
) -> str:
    stub = tables_pb2_grpc.TableServiceStub(channel)
    reply = await stub.CreateTable(
        create_request(players, deck_order=deck_order, ruleset=ruleset, **options),
        metadata=service_auth(),
        timeout=CALL_TIMEOUT_S,
    )
    for i, p in enumerate(players):
        p.seat = i
    return str(reply.table_id)


# --- playing ---------------------------------------------------------------


async def greedy_turn(
    player: Client, table_id: str, view: table_pb2.TableView, bot: GreedyBot
) -> table_pb2.TableView:
    """Play one whole turn with the greedy bot, through the API only."""
    seat = view.my_seat
    while view.phase in (table_pb2.PHASE_DRAW, table_pb2.PHASE_PLAY) and view.current_seat == seat:
        action = bot.move(state_from_view(view), seat)
        if action is None:
            return view
        reply = await player.send(table_id, action)
        view = reply.view
    return view


async def seat_map(players: Sequence[Client], table_id: str) -> dict[int, Client]:
    by_seat: dict[int, Client] = {}
    for p in players:
        if p.seat is None:
            await p.view(table_id)
        assert p.seat is not None
        by_seat[p.seat] = p
    return by_seat


async def play_turns(
    players: Sequence[Client],
    table_id: str,
    turns: int,
    *,
    after_action: Callable[[], Awaitable[None]] | None = None,
) -> table_pb2.TableView:
    """Every player plays greedily, in turn, for ``turns`` turns or to the end. Tests
    that check how a game ends deal a fixed deck (`shuffled_deck`), which never
    leaves a seat without a move.

    ``after_action`` runs after every single action (a test's checks)."""
    bot = GreedyBot()
    by_seat = await seat_map(players, table_id)
    view = await players[0].view(table_id)
    for _ in range(turns):
        if view.phase == table_pb2.PHASE_GAME_OVER:
            break
        current = by_seat[view.current_seat]
        view = await current.view(table_id)
        while (
            view.phase in (table_pb2.PHASE_DRAW, table_pb2.PHASE_PLAY)
            and view.current_seat == current.seat
        ):
            action = bot.move(state_from_view(view), view.my_seat)
            if action is None:
                # A random deal can leave a seat with no legal move (two jokers in a
                # cafe hand and nowhere to lay them). The server passes such a turn at
                # once when it can tell; otherwise only the clock could, so it leaves.
                passed = await turn_passed(current, table_id, view.version)
                if passed is not None:
                    view = passed
                    continue
                action = Leave()
            view = (await current.send(table_id, action)).view
            if after_action is not None:
                await after_action()
    return view


async def turn_passed(
    player: Client, table_id: str, version: int, wait_s: float = 3.0
) -> table_pb2.TableView | None:
    """The table once the server has moved it on from ``version``, or None if it
    has not within ``wait_s``."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        view = await player.view(table_id)
        if view.version != version:
            return view
        await asyncio.sleep(0.05)
    return None


async def play_to_end(
    players: Sequence[Client],
    table_id: str,
    max_turns: int = 400,
    *,
    after_action: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Every player plays greedily, in turn, until the game is over."""
    view = await play_turns(players, table_id, max_turns, after_action=after_action)
    assert view.phase == table_pb2.PHASE_GAME_OVER, "the game did not end"


# --- watching --------------------------------------------------------------


class Watcher:
    """One grpcio Watch stream, read at the test's pace."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.events: list[table_pb2.TableEvent] = []

    async def next(self) -> table_pb2.TableEvent | None:
        """The next event, or None once the stream ended with OK."""
        reply = await self.call.read()
        if reply is grpc.aio.EOF:
            return None
        self.events.append(reply.event)
        return reply.event

    async def until(
        self, match: Callable[[table_pb2.TableEvent], bool], timeout: float = WAIT_S
    ) -> table_pb2.TableEvent:
        async with asyncio.timeout(timeout):
            while True:
                event = await self.next()
                assert event is not None, "the stream ended first"
                if match(event):
                    return event

    async def to_end(self, timeout: float = WAIT_S) -> list[table_pb2.TableEvent]:
        """Everything up to the end of the stream (the server ends it after GameEnded)."""
        async with asyncio.timeout(timeout):
            while await self.next() is not None:
                pass
        return self.events

    def cancel(self) -> None:
        self.call.cancel()


def kind_is(kind: int, seat: int | None = None) -> Callable[[table_pb2.TableEvent], bool]:
    def match(event: table_pb2.TableEvent) -> bool:
        return event.kind == kind and (seat is None or event.seat == seat)

    return match


# --- refusals --------------------------------------------------------------


async def refused(call: Awaitable[Any]) -> tuple[grpc.StatusCode, str | None]:
    """The status code and ErrorInfo reason a call failed with (it must fail)."""
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await call
    info = error_info(failure.value)
    return failure.value.code(), info.reason if info is not None else None


async def snapshot(clients: Sequence[Client], table_id: str) -> list[table_pb2.TableView]:
    """Every seat's view, minus the server's clock: equal snapshots, same table."""
    views = []
    for c in clients:
        v = await c.view(table_id)
        v.ClearField("server_time")
        views.append(v)
    return views
