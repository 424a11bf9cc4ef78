"""Players that retry an unanswered action with its request id until it is
answered, and watchers that resume from their last seq."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message

from clients.cli.viewstate import state_from_view
from services.common.auth import issue_service_token
from services.common.errors import error_info
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, game_pb2, game_pb2_grpc, table_pb2
from services.game.rules.actions import Action, Leave
from services.game.rules.bots import GreedyBot
from tests.game import requests as game_requests

from .processes import CALL_TIMEOUT_S, LONG_TURNS_MS, RETRY_FOR_S, SECRET, status_of


@dataclass(frozen=True, slots=True)
class Account:
    player_id: str
    token: str
    name: str

    @property
    def metadata(self) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {self.token}"),)


async def login(channel: grpc.aio.Channel, name: str) -> Account:
    reply = await auth_pb2_grpc.AuthServiceStub(channel).Login(
        auth_pb2.LoginRequest(device_id=f"device-{uuid.uuid4().hex}", display_name=name),
        timeout=CALL_TIMEOUT_S,
    )
    return Account(reply.player_id, reply.token, name)


def service_metadata() -> tuple[tuple[str, str]]:
    token = issue_service_token("matchmaker", secret=SECRET, now=time.time())
    return (("authorization", f"Bearer {token}"),)


async def create_table(
    channel: grpc.aio.Channel,
    players: Sequence[Account | str],
    *,
    deck_order: Sequence[int] = (),
    rounds: int = 1,
    turn_timer_ms: int = LONG_TURNS_MS,
    elimination_cap: int = 0,
) -> str:
    """A cafe table; a plain string seats a bot the server plays itself."""
    seated = [
        tables_pb2.SeatedPlayer(player_id=p.player_id, display_name=p.name)
        if isinstance(p, Account)
        else tables_pb2.SeatedPlayer(player_id=p, display_name=p, is_bot=True)
        for p in players
    ]
    reply = await tables_pb2_grpc.TableServiceStub(channel).CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="cafe",
            options=table_pb2.TableOptions(
                turn_timer_ms=turn_timer_ms, rounds=rounds, elimination_cap=elimination_cap
            ),
            players=seated,
            deck_order=deck_order,
        ),
        metadata=service_metadata(),
        timeout=CALL_TIMEOUT_S,
    )
    return str(reply.table_id)


def request_for(table_id: str, action: Action, request_id: str) -> tuple[str, Message]:
    """The RPC name and request message that carry one engine action."""
    return game_requests.request_for(table_id, action, request_id=request_id)


@dataclass(frozen=True, slots=True)
class Ack:
    """One acknowledged action, as its client recorded it."""

    table_id: str
    player_id: str
    seat: int
    request_id: str
    action: Action
    version: int
    reply: bytes = field(repr=False)
    attempts: int


@dataclass(frozen=True, slots=True)
class Failure:
    method: str
    address: str
    code: grpc.StatusCode
    reason: str | None
    details: str = ""


RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
"""An action that got no answer may or may not have applied: retry it, same request id."""


class Seat:
    """One player at one table, talking to a list of replicas: a failed call is
    retried (bounded) on the next one, an action always with its own request id."""

    def __init__(
        self,
        account: Account,
        seat: int,
        table_id: str,
        targets: list[str],
        channel_for: Callable[[str], grpc.aio.Channel],
    ) -> None:
        self.account = account
        self.seat = seat
        self.table_id = table_id
        self.targets = targets
        """Shared between seats: a test may drop a dead replica from it."""
        self._channel_for = channel_for
        self._turn = 0
        self.attempts = 0
        self.acks: list[Ack] = []
        self.failures: list[Failure] = []
        self.in_flight: Callable[[str, Message], Any] | None = None
        """Called with (address, request) right after an action is sent (a test's hook)."""

    def _target(self) -> str:
        return self.targets[self._turn % len(self.targets)]

    async def call(self, method: str, request: Message) -> Any:
        deadline = time.monotonic() + RETRY_FOR_S
        backoff = 0.05
        attempts = 0
        while True:
            address = self._target()
            stub = game_pb2_grpc.GameServiceStub(self._channel_for(address))
            attempts += 1
            try:
                call = getattr(stub, method)(
                    request, metadata=self.account.metadata, timeout=CALL_TIMEOUT_S
                )
                if self.in_flight is not None and method != "GetTable":
                    hook, self.in_flight = self.in_flight, None
                    await hook(address, request)
                reply = await call
            except grpc.aio.AioRpcError as error:
                code, reason = status_of(error)
                self.failures.append(Failure(method, address, code, reason, error.details() or ""))
                if code not in RETRYABLE or time.monotonic() > deadline:
                    raise
                self._turn += 1  # the next replica
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 0.5)
                continue
            self.attempts = attempts
            return reply

    async def view(self) -> table_pb2.TableView:
        reply = await self.call("GetTable", game_pb2.GetTableRequest(table_id=self.table_id))
        view: table_pb2.TableView = reply.view
        return view

    async def act(self, action: Action) -> Any:
        request_id = uuid.uuid4().hex
        method, request = request_for(self.table_id, action, request_id)
        reply = await self.call(method, request)
        self.acks.append(
            Ack(
                self.table_id,
                self.account.player_id,
                self.seat,
                request_id,
                action,
                reply.version,
                reply.SerializeToString(),
                self.attempts,
            )
        )
        return reply


async def play_game(
    seats: Sequence[Seat],
    *,
    after_action: Callable[[], Any] | None = None,
    max_actions: int = 5_000,
) -> table_pb2.TableView:
    """The seats play greedily, each in turn, until the game is over. A seat left
    with no legal move (two jokers and nowhere to lay them, say) leaves the table,
    which ends a two-seat game: an acknowledged action like any other."""
    bot = GreedyBot()
    by_seat = {s.seat: s for s in seats}
    view = await seats[0].view()
    for _ in range(max_actions):
        if view.phase == table_pb2.PHASE_GAME_OVER:
            return view
        current = by_seat[view.current_seat]
        if view.my_seat != current.seat or not view.HasField("my_seat"):
            view = await current.view()
        action = bot.move(state_from_view(view), current.seat) or Leave()
        view = (await current.act(action)).view
        if after_action is not None:
            result = after_action()
            if asyncio.iscoroutine(result):
                await result
            view = await current.view()  # the hook may have moved the table on
    raise AssertionError("the game did not end")


async def readers(
    addresses: Sequence[str],
    channel_for: Callable[[str], grpc.aio.Channel],
    reader: Seat,
    stop: asyncio.Event,
    count: int,
) -> list[Failure]:
    """``count`` GetTable loops at once, spread over the replicas, until ``stop``: while
    the database goes away some are sure to be in the middle of a query, and what
    they are answered is what clients see."""
    failures: list[Failure] = []

    async def read(i: int) -> None:
        address = addresses[i % len(addresses)]
        stub = game_pb2_grpc.GameServiceStub(channel_for(address))
        while not stop.is_set():
            try:
                await stub.GetTable(
                    game_pb2.GetTableRequest(table_id=reader.table_id),
                    metadata=reader.account.metadata,
                    timeout=CALL_TIMEOUT_S,
                )
            except grpc.aio.AioRpcError as error:
                code, reason = status_of(error)
                failures.append(Failure("GetTable", address, code, reason, error.details() or ""))
                await asyncio.sleep(0.02)

    await asyncio.gather(*(read(i) for i in range(count)))
    return failures


# --- watchers ----------------------------------------------------------------


class ResumingWatcher:
    """A Watch that, when cut, resumes from its last seq on the next replica,
    until the stream ends with OK (after GameEnded)."""

    def __init__(
        self,
        account: Account,
        table_id: str,
        targets: list[str],
        channel_for: Callable[[str], grpc.aio.Channel],
    ) -> None:
        self.account = account
        self.table_id = table_id
        self.targets = targets
        self._channel_for = channel_for
        self.events: list[table_pb2.TableEvent] = []
        self.ends: list[tuple[grpc.StatusCode, str | None, str | None]] = []
        """How each stream but the last ended: code, reason, ErrorInfo after_seq."""
        self.caught_up = asyncio.Event()
        self.position = 0

    async def run(self, timeout: float = 90.0) -> list[table_pb2.TableEvent]:
        turn = 0
        async with asyncio.timeout(timeout):
            while True:
                address = self.targets[turn % len(self.targets)]
                stub = game_pb2_grpc.GameServiceStub(self._channel_for(address))
                call = stub.Watch(
                    game_pb2.WatchRequest(table_id=self.table_id, after_seq=self.position),
                    metadata=self.account.metadata,
                )
                try:
                    async for reply in call:
                        self.events.append(reply.event)
                        self.position = reply.event.seq
                        self.caught_up.set()
                    return self.events
                except grpc.aio.AioRpcError as error:
                    info = error_info(error)
                    after = info.metadata.get("after_seq") if info is not None else None
                    self.ends.append((error.code(), info.reason if info else None, after))
                    if error.code() != grpc.StatusCode.UNAVAILABLE:
                        raise
                    turn += 1
                    await asyncio.sleep(0.1)
