"""Every enum field of every request, in every package the servers serve, refuses a
value outside its enum: INVALID_ARGUMENT with the field's own reason, never read
as the default (a newer app's value, or garbage).

The cases come from the request descriptors: each enum field reachable from an
RPC's request (through nested, repeated and oneof messages) is one case. A new
enum field, or a new service, fails `test_every_enum_field_has_its_reason` until
it is given its reason below, and then `test_a_value_outside_the_enum_is_refused`
until the servers refuse it."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor, symbol_database
from google.protobuf.message import Message

from scripts import gen_proto
from services.common.errors import error_info
from services.common.pb.rummy.internal.v1 import tables_pb2
from services.common.wire.reasons import ServiceReason
from tests.admin.harness import operator_auth
from tests.game.harness import create_table, login, service_auth, snapshot
from tests.matchmaker.harness import backend

FD = descriptor.FieldDescriptor
INVALID = grpc.StatusCode.INVALID_ARGUMENT
CALL_S = 10.0

REFUSALS: dict[str, ServiceReason] = {
    "rummy.v1.JokerSuit.suit": ServiceReason.SUIT_INVALID,
    "rummy.v1.MeldSpec.kind": ServiceReason.MELD_KIND_INVALID,
    "rummy.v1.LayOffRequest.side": ServiceReason.SIDE_INVALID,
    "rummy.v1.LayOffPlacement.side": ServiceReason.SIDE_INVALID,
    "rummy.v1.EnqueueRequest.mode": ServiceReason.MATCH_MODE_INVALID,
    "rummy.v1.EnqueueRequest.bot_level": ServiceReason.BOT_LEVEL_UNKNOWN,
    "rummy.v1.CreatePrivateTableRequest.bot_level": ServiceReason.BOT_LEVEL_UNKNOWN,
    "rummy.admin.v1.ListTablesRequest.state": ServiceReason.FILTER_INVALID,
    "rummy.internal.v1.CreateTableRequest.bot_level": ServiceReason.BOT_LEVEL_UNKNOWN,
}
"""Each enum field of a request (by its full name), and the reason a value outside
its enum is refused with."""

SERVED: dict[str, tuple[str, str]] = {
    "rummy.v1.AuthService": ("game", "none"),
    "rummy.v1.GameService": ("game", "player"),
    "rummy.v1.MatchmakerService": ("matchmaker", "player"),
    "rummy.v1.PlayerService": ("game", "player"),
    "rummy.admin.v1.TableAdminService": ("game", "operator"),
    "rummy.admin.v1.QueueAdminService": ("matchmaker", "operator"),
    "rummy.internal.v1.TableService": ("game", "service"),
}
"""Every service of the protos: the server that serves it, and whose token opens it."""

WELL_FORMED: dict[str, Any] = {"table_size": 2, "replacement_card_ids": [0]}
"""Values that let a request past its other checks, so that only the enum is wrong."""


@dataclass(frozen=True)
class Case:
    service: descriptor.ServiceDescriptor
    method: descriptor.MethodDescriptor
    path: tuple[descriptor.FieldDescriptor, ...]
    """From the request down to the enum field."""

    @property
    def field(self) -> descriptor.FieldDescriptor:
        return self.path[-1]

    @property
    def name(self) -> str:
        return f"{self.service.name}.{self.method.name}: " + ".".join(f.name for f in self.path)

    def request(self, value: int, table_id: str) -> Message:
        """The request with ``value`` in the enum field, everything else well formed."""
        cls = symbol_database.Default().GetSymbol(self.method.input_type.full_name)
        request: Message = cls()
        _fill(request, table_id)
        message = request
        for field in self.path[:-1]:
            if field.is_repeated:
                message = getattr(message, field.name).add()
            else:
                message = getattr(message, field.name)
                message.SetInParent()  # present, the oneof's choice among them
            _fill(message, table_id)
        if self.field.is_repeated:
            getattr(message, self.field.name).append(value)
        else:
            setattr(message, self.field.name, value)
        return request

    def values(self) -> tuple[int, int]:
        """The next value after the enum's last (a newer build's), and one below it."""
        known = [v.number for v in self.field.enum_type.values]
        return max(known) + 1, -1


def _fill(message: Message, table_id: str) -> None:
    fields = message.DESCRIPTOR.fields_by_name
    if "table_id" in fields:
        message.table_id = table_id
    for name, value in WELL_FORMED.items():
        if name in fields:
            field = fields[name]
            if field.is_repeated:
                getattr(message, name).extend(value)
            else:
                setattr(message, name, value)


def modules() -> list[ModuleType]:
    """The generated module of every proto file, in every package."""
    found = []
    for proto in gen_proto.proto_files():
        relative = proto.relative_to(gen_proto.PROTO_ROOT).with_suffix("")
        dotted = ".".join(relative.parts)
        found.append(importlib.import_module(f"{gen_proto.OUT_PACKAGE}.{dotted}_pb2"))
    return found


def services() -> list[descriptor.ServiceDescriptor]:
    return [s for m in modules() for s in m.DESCRIPTOR.services_by_name.values()]


def _enum_paths(
    message: descriptor.Descriptor, seen: frozenset[str]
) -> Iterator[tuple[descriptor.FieldDescriptor, ...]]:
    for field in message.fields:
        if field.type == FD.TYPE_ENUM:
            yield (field,)
        elif field.type == FD.TYPE_MESSAGE and field.message_type.full_name not in seen:
            inner = field.message_type
            if inner.file.package.startswith("google."):
                continue  # the well-known types hold no enum a request sets
            for path in _enum_paths(inner, seen | {inner.full_name}):
                yield (field, *path)


def cases() -> list[Case]:
    return [
        Case(service, method, path)
        for service in services()
        for method in service.methods
        for path in _enum_paths(method.input_type, frozenset({method.input_type.full_name}))
    ]


CASES = cases()


def test_every_enum_field_has_its_reason() -> None:
    assert {s.full_name for s in services()} == SERVED.keys()
    assert len(CASES) >= len(REFUSALS), "the descriptors were read"
    assert {case.field.full_name for case in CASES} == REFUSALS.keys()


def test_the_cases_reach_every_kind_of_path() -> None:
    # Nested, repeated and oneof messages on the way down, as in the protos.
    names = {case.name for case in CASES}
    assert "GameService.Meld: melds.joker_suits.suit" in names
    assert "GameService.SwapJoker: lay_off.side" in names
    assert "TableService.CreateTables: tables.bot_level" in names


async def _outcome(
    channel: grpc.aio.Channel,
    case: Case,
    request: Message,
    metadata: tuple[tuple[str, str], ...],
) -> tuple[grpc.StatusCode, str | None]:
    """The status and reason the call ended with; for a batch, its one table's."""
    reply_type = symbol_database.Default().GetSymbol(case.method.output_type.full_name)
    path = f"/{case.service.full_name}/{case.method.name}"
    try:
        if case.method.server_streaming:
            stream = channel.unary_stream(
                path,
                request_serializer=type(request).SerializeToString,
                response_deserializer=reply_type.FromString,
            )(request, metadata=metadata, timeout=CALL_S)
            await stream.read()
            stream.cancel()  # a ticket was queued: the value was taken
            return grpc.StatusCode.OK, None
        reply = await channel.unary_unary(
            path,
            request_serializer=type(request).SerializeToString,
            response_deserializer=reply_type.FromString,
        )(request, metadata=metadata, timeout=CALL_S)
    except grpc.aio.AioRpcError as error:
        info = error_info(error)
        return error.code(), info.reason if info is not None else None
    if isinstance(reply, tables_pb2.CreateTablesResponse):
        (result,) = reply.results
        if result.HasField("refused"):
            codes = {code.value[0]: code for code in grpc.StatusCode}
            return codes[result.refused.code], result.refused.reason
    return grpc.StatusCode.OK, None


@pytest.mark.timeout(120)
async def test_a_value_outside_the_enum_is_refused(fresh_dsn: str, subtests: Any) -> None:
    async with backend(fresh_dsn) as b:
        game = grpc.aio.insecure_channel(b.game_target)
        try:
            seated = [await login(game, name) for name in ("Ana", "Bo")]
            queuer = await login(b.channel(), "Cy")  # seated nowhere: free to queue
            table_id = await create_table(game, seated)
            before = await snapshot(seated, table_id)
            channels = {"game": game, "matchmaker": b.channel()}
            credentials = {
                ("game", "player"): seated[0].auth,
                ("matchmaker", "player"): queuer.auth,
                ("game", "operator"): operator_auth(),
                ("matchmaker", "operator"): operator_auth(),
                ("game", "service"): service_auth(),
            }
            for case in CASES:
                server, who = SERVED[case.service.full_name]
                for value in case.values():
                    with subtests.test(msg=f"{case.name} = {value}"):
                        request = case.request(value, table_id)
                        got = await _outcome(
                            channels[server], case, request, credentials[server, who]
                        )
                        assert got == (INVALID, REFUSALS[case.field.full_name])
            assert await snapshot(seated, table_id) == before
        finally:
            await game.close()
