"""What the fault tests share: game servers as real processes, players that retry
an unanswered action with its request id, watchers that resume from their last
seq, a TCP proxy that can hold or cut a connection, and the checks of a table's
log against what the clients were told.

Everything listens on and talks to 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import grpc
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc

from clients.cli.viewstate import state_from_view
from services.common.auth import issue_service_token
from services.common.errors import error_info
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, game_pb2, game_pb2_grpc, table_pb2
from services.game import eventlog
from services.game.rules import events as ev
from services.game.rules.actions import (
    Action,
    Discard,
    DrawStock,
    LayOff,
    Leave,
    Meld,
    SwapJoker,
    TakeDiscard,
)
from services.game.rules.bots import GreedyBot
from tests.game import harness
from tests.game import requests as game_requests

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


# --- players -----------------------------------------------------------------


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
) -> str:
    """A cafe table; a plain string seats a bot the server plays itself."""
    seated = [
        game_pb2.SeatedPlayer(player_id=p.player_id, display_name=p.name)
        if isinstance(p, Account)
        else game_pb2.SeatedPlayer(player_id=p, display_name=p, is_bot=True)
        for p in players
    ]
    reply = await game_pb2_grpc.GameServiceStub(channel).CreateTable(
        game_pb2.CreateTableRequest(
            ruleset="cafe",
            options=table_pb2.TableOptions(turn_timer_ms=turn_timer_ms, rounds=rounds),
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


# --- what the server stored ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class Logged:
    seq: int
    version: int
    kind: str
    event: ev.Event


async def read_log(con: asyncpg.Connection, table_id: str) -> list[Logged]:
    rows = await con.fetch(
        "SELECT seq, version, kind, payload FROM table_events WHERE table_id = $1 ORDER BY seq",
        uuid.UUID(table_id),
    )
    return [
        Logged(r["seq"], r["version"], r["kind"], eventlog.decode(r["kind"], r["payload"]))
        for r in rows
    ]


async def stored_answer(con: asyncpg.Connection, table_id: str, request_id: str) -> bytes | None:
    """The answer the server committed for a request id (None: it never applied it).
    The server may keep the id scoped by the call, as ``"Discard:<id>"``."""
    answer = await con.fetchval(
        "SELECT response FROM action_requests WHERE table_id = $1"
        " AND (request_id = $2 OR request_id LIKE '%:' || $2)",
        uuid.UUID(table_id),
        request_id,
    )
    return None if answer is None else bytes(answer)


def leads_to(action: Action, event: ev.Event) -> bool:
    """Whether ``event`` is the first one an accepted ``action`` logs."""
    match action:
        case DrawStock():
            return isinstance(event, ev.Drew) and not event.from_discard
        case TakeDiscard():
            return isinstance(event, ev.Drew) and event.from_discard
        case Meld():
            return isinstance(event, ev.Melded)
        case LayOff():
            return isinstance(event, ev.LaidOff)
        case SwapJoker():
            return isinstance(event, ev.JokerSwapped)
        case Discard():
            return isinstance(event, ev.Discarded) and event.card == action.card
        case Leave():
            return isinstance(event, ev.PlayerLeft)
    return False


async def assert_whole(con: asyncpg.Connection, table_id: str) -> list[Logged]:
    """The table row and its log agree: seqs 1..last_seq with no gap or repeat,
    versions 1..version each with events, in order."""
    row = await con.fetchrow(
        "SELECT version, last_seq, status FROM tables WHERE id = $1", uuid.UUID(table_id)
    )
    assert row is not None, f"no table {table_id}"
    log = await read_log(con, table_id)
    assert [x.seq for x in log] == list(range(1, row["last_seq"] + 1)), "seqs vs last_seq"
    versions = [x.version for x in log]
    assert versions == sorted(versions), "versions out of seq order"
    assert sorted(set(versions)) == list(range(1, row["version"] + 1)), "a version has no events"
    return log


async def assert_acks_logged_once(
    con: asyncpg.Connection, table_id: str, acks: Sequence[Ack]
) -> list[Logged]:
    """Every acknowledged action is in the log exactly once, at the version it was
    answered with, and nothing else was applied: version 1 is the deal, each later
    version one acknowledged action, and the stored answer is the one the client got."""
    log = await assert_whole(con, table_id)
    acks = [a for a in acks if a.table_id == table_id]
    first: dict[int, Logged] = {}
    for x in log:
        first.setdefault(x.version, x)
    versions = [a.version for a in acks]
    assert len(set(versions)) == len(versions), "two acknowledged actions share a version"
    assert sorted(versions) == list(range(2, 2 + len(acks))), "applied but not acknowledged"
    assert set(first) == {1, *versions}
    for a in acks:
        lead = first[a.version].event
        assert leads_to(a.action, lead), (a, lead)
        assert getattr(lead, "seat", None) == a.seat, (a, lead)
    # Explicitly: one Discarded event per acknowledged discard, per seat.
    for seat in {a.seat for a in acks}:
        discards = sum(1 for a in acks if a.seat == seat and isinstance(a.action, Discard))
        logged = sum(1 for x in log if isinstance(x.event, ev.Discarded) and x.event.seat == seat)
        assert logged == discards, f"seat {seat}: {logged} discards logged, {discards} acked"
    rows = await con.fetch(
        "SELECT player_id, request_id, response, error FROM action_requests WHERE table_id = $1",
        uuid.UUID(table_id),
    )
    assert all(r["error"] is None for r in rows), [r["error"] for r in rows if r["error"]]
    stored = {
        (r["player_id"], r["request_id"].rpartition(":")[2]): bytes(r["response"]) for r in rows
    }
    assert len(stored) == len(rows), "one request id stored twice"
    assert stored == {(a.player_id, a.request_id): a.reply for a in acks}
    assert log[-1].kind == "GameEnded"
    status = await con.fetchval("SELECT status FROM tables WHERE id = $1", uuid.UUID(table_id))
    assert status == "finished"
    return log


def assert_stream_is_log(events: Sequence[table_pb2.TableEvent], log: Sequence[Logged]) -> None:
    """A (resumed) stream saw every logged event once, in order."""
    assert [e.seq for e in events] == [x.seq for x in log], "gap or duplicate in the stream"
    assert [e.version for e in events] == [x.version for x in log]


# --- a TCP proxy that can hold or cut --------------------------------------------

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
            if link.held and not link.cut:
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
