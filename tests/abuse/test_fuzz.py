"""Random and malformed requests at every RPC of real servers.

Requests are generated from the messages' field descriptors (every scalar
kind, strings, bytes, enums with unknown values, repeated and nested fields,
bounded sizes), some aimed at a real table, and raw garbage bytes are sent
through a generic channel call. Whatever arrives, the servers answer with a
deliberate status, never UNKNOWN or INTERNAL, stay up, and a refused call
leaves the table under test exactly as it was (stored version and last event,
and the players' view)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
import grpc
import pytest
from google.protobuf import descriptor, message_factory
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.common.limits import Limits
from services.common.pb.rummy.internal.v1 import tables_pb2
from services.common.pb.rummy.v1 import auth_pb2, game_pb2, matchmaker_pb2, player_pb2
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer
from tests.game.harness import (
    LONG_TURNS_MS,
    SECRET,
    address,
    create_table,
    login,
    service_auth,
    start_server,
)

FD = descriptor.FieldDescriptor
CALL_S = 10.0
STREAM_FIRST_S = 2.0
"""A stream that has said nothing yet by then is waiting for events: fine."""
BAD = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL}
NO_LIMITS = Limits(player_rate=0, peer_rate=0, streams_per_player=0, streams_per_replica=0)
"""The fuzzer calls faster than any player; the limits have tests of their own."""

GAME = game_pb2.DESCRIPTOR.services_by_name["GameService"]
TABLES = tables_pb2.DESCRIPTOR.services_by_name["TableService"]
AUTH = auth_pb2.DESCRIPTOR.services_by_name["AuthService"]
MATCHMAKER = matchmaker_pb2.DESCRIPTOR.services_by_name["MatchmakerService"]
PLAYER = player_pb2.DESCRIPTOR.services_by_name["PlayerService"]


@dataclass(frozen=True)
class Rpc:
    server: str
    """"game" or "matchmaker"."""
    method: descriptor.MethodDescriptor

    @property
    def path(self) -> str:
        return f"/{self.method.containing_service.full_name}/{self.method.name}"


RPCS = [
    *(Rpc("game", m) for m in (*GAME.methods, *TABLES.methods, *PLAYER.methods, *AUTH.methods)),
    *(Rpc("matchmaker", m) for m in (*MATCHMAKER.methods, *AUTH.methods)),
]


# --- requests from descriptors ---------------------------------------------------------

_INTS = {
    FD.TYPE_INT32: (-(2**31), 2**31 - 1),
    FD.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FD.TYPE_INT64: (-(2**63), 2**63 - 1),
    FD.TYPE_SINT64: (-(2**63), 2**63 - 1),
    FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FD.TYPE_UINT32: (0, 2**32 - 1),
    FD.TYPE_FIXED32: (0, 2**32 - 1),
    FD.TYPE_UINT64: (0, 2**64 - 1),
    FD.TYPE_FIXED64: (0, 2**64 - 1),
}


def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    # Small values hit real card ids, seats and sizes; the extremes hit the edges.
    small = st.integers(max(low, -2), min(high, 120))
    return st.one_of(small, st.integers(low, high))


def scalar(field: FD, hints: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    if field.name in hints:
        return hints[field.name]
    if field.type in _INTS:
        return _integers(*_INTS[field.type])
    if field.type == FD.TYPE_BOOL:
        return st.booleans()
    if field.type == FD.TYPE_STRING:
        return st.text(max_size=40)
    if field.type == FD.TYPE_BYTES:
        return st.binary(max_size=40)
    if field.type in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return st.floats(width=32 if field.type == FD.TYPE_FLOAT else 64)
    if field.type == FD.TYPE_ENUM:
        known = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(known), st.integers(-(2**31), 2**31 - 1))
    raise AssertionError(f"no strategy for {field.full_name}")


def messages(
    desc: descriptor.Descriptor, hints: dict[str, st.SearchStrategy[Any]], depth: int = 0
) -> st.SearchStrategy[Message]:
    """Messages of type ``desc`` with any subset of fields set (nesting bounded)."""
    cls = message_factory.GetMessageClass(desc)
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for field in desc.fields:
        if field.type == FD.TYPE_MESSAGE:
            if depth >= 3 or field.message_type.GetOptions().map_entry:
                continue
            one: st.SearchStrategy[Any] = messages(field.message_type, hints, depth + 1)
        else:
            one = scalar(field, hints)
        repeated = field.is_repeated
        fields[field.name] = st.lists(one, max_size=4) if repeated else one

    def build(values: dict[str, Any]) -> Message:
        message = cls()
        for name, value in values.items():
            field = desc.fields_by_name[name]
            target = getattr(message, name) if field.type == FD.TYPE_MESSAGE else None
            if field.is_repeated:
                if field.type == FD.TYPE_MESSAGE:
                    for item in value:
                        getattr(message, name).add().CopyFrom(item)
                else:
                    getattr(message, name).extend(value)
            elif target is not None:
                target.CopyFrom(value)
            else:
                setattr(message, name, value)
        return message

    return st.fixed_dictionaries({}, optional=fields).map(build)


# --- the servers under test ------------------------------------------------------------


@dataclass
class Target:
    loop: asyncio.AbstractEventLoop
    channels: dict[str, grpc.aio.Channel]
    credentials: list[tuple[tuple[str, str], ...]]
    table_id: str
    state: Callable[[], Awaitable[Any]]
    calls: int = 0

    def send(self, rpc: Rpc, payload: bytes, credential: int) -> grpc.StatusCode:
        """From the fuzzing thread: one call on the servers' loop, then its checks."""
        future = asyncio.run_coroutine_threadsafe(
            self._send(rpc, payload, self.credentials[credential]), self.loop
        )
        return future.result(timeout=60)

    async def _send(
        self, rpc: Rpc, payload: bytes, metadata: tuple[tuple[str, str], ...]
    ) -> grpc.StatusCode:
        self.calls += 1
        before = await self.state()
        channel = self.channels[rpc.server]
        if rpc.method.server_streaming:
            call = channel.unary_stream(rpc.path)(payload, metadata=metadata)
            try:
                await asyncio.wait_for(call.read(), STREAM_FIRST_S)
            except TimeoutError:
                pass
            except grpc.aio.AioRpcError:
                pass
            call.cancel()
            code = await call.code()
            details = await call.details()
        else:
            try:
                await channel.unary_unary(rpc.path)(payload, metadata=metadata, timeout=CALL_S)
                code, details = grpc.StatusCode.OK, ""
            except grpc.aio.AioRpcError as error:
                code, details = error.code(), error.details()
        assert code not in BAD, f"{rpc.path} answered {code}: {details}"
        assert code is not grpc.StatusCode.DEADLINE_EXCEEDED, f"{rpc.path} hung"
        if code not in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED):
            assert await self.state() == before, f"refused {rpc.path} changed the table"
        return code


@pytest.fixture
async def target(fresh_dsn: str) -> Any:
    async with contextlib.AsyncExitStack() as running:
        # Closed in the reverse order of their starts, each only once started.
        game = await start_server(fresh_dsn, limits=NO_LIMITS)
        running.push_async_callback(game.stop, 0)
        matchmaker = MatchmakerServer(
            MatchmakerConfig(
                dsn=fresh_dsn, secret=SECRET, game_target=address(game), limits=NO_LIMITS
            )
        )
        await matchmaker.start()
        running.push_async_callback(matchmaker.stop, 0)
        game_channel = grpc.aio.insecure_channel(address(game))
        running.push_async_callback(game_channel.close)
        mm_channel = grpc.aio.insecure_channel(f"127.0.0.1:{matchmaker.port}")
        running.push_async_callback(mm_channel.close)
        con = await asyncpg.connect(fresh_dsn)
        running.push_async_callback(con.close)
        alice, bob, outsider = [await login(game_channel, n) for n in ("Alice", "Bob", "Eve")]
        # The clock never moves the table on between a refusal and the check after it.
        table_id = await create_table(game_channel, [alice, bob], turn_timer_ms=LONG_TURNS_MS)

        async def state() -> Any:
            """The table as a request could change it. Who is connected is not: a
            fuzzed Watch that a player's token opened may be told as presence
            (an event with a seq, no version) after its call ended."""
            row = await con.fetchrow(
                "SELECT t.version, (SELECT count(*) FROM table_events e"
                " WHERE e.table_id = t.id AND e.kind <> 'PlayerConnection') AS events"
                " FROM tables t WHERE t.id = $1::uuid",
                table_id,
            )
            views = []
            for p in (alice, bob):
                view = await p.view(table_id)
                view.ClearField("server_time")
                view.ClearField("last_seq")
                for seat in view.seats:
                    seat.ClearField("connected")
                views.append(view.SerializeToString(deterministic=True))
            return tuple(row), views

        yield Target(
            asyncio.get_running_loop(),
            {"game": game_channel, "matchmaker": mm_channel},
            [alice.auth, bob.auth, outsider.auth, (), service_auth()],
            table_id,
            state,
        )


def payloads(target: Target) -> st.SearchStrategy[tuple[Rpc, bytes]]:
    hints: dict[str, st.SearchStrategy[Any]] = {
        "table_id": st.one_of(st.just(target.table_id), st.text(max_size=40)),
    }

    def for_rpc(rpc: Rpc) -> st.SearchStrategy[tuple[Rpc, bytes]]:
        structured = messages(rpc.method.input_type, hints).map(lambda m: m.SerializeToString())
        garbage = st.binary(max_size=300)
        return st.tuples(st.just(rpc), st.one_of(structured, structured, garbage))

    return st.sampled_from(RPCS).flatmap(for_rpc)


FUZZ = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@pytest.mark.timeout(180)
async def test_fuzzed_requests_are_refused_cleanly_and_change_nothing(target: Target) -> None:
    # Every RPC at least once with nothing, a truncated varint and junk, whoever calls.
    fixed: Sequence[bytes] = (b"", b"\x08", b"\xff" * 16, b"\x0a\x05abc")
    for rpc in RPCS:
        for i, payload in enumerate(fixed):
            await target._send(rpc, payload, target.credentials[i % len(target.credentials)])

    @FUZZ
    @given(case=payloads(target), credential=st.integers(0, len(target.credentials) - 1))
    def fuzz(case: tuple[Rpc, bytes], credential: int) -> None:
        rpc, payload = case
        target.send(rpc, payload, credential)

    await asyncio.to_thread(fuzz)
    assert target.calls >= len(RPCS) * len(fixed) + 300
    # Still serving, and the table still plays.
    assert (await target.state())[0] is not None
