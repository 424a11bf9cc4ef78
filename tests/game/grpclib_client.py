"""A client on grpclib, a pure-Python gRPC implementation independent of the
server's grpcio: the stand-in for a mobile app's own gRPC stack.

It shares only the protobuf message classes. The stub is made by hand from the
service descriptors: the raw method paths and grpclib's `Cardinality`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpclib.client import Channel
from grpclib.const import Cardinality
from grpclib.exceptions import GRPCError

from services.common.auth import issue_service_token
from services.common.pb.rummy.internal.v1 import tables_pb2
from services.common.pb.rummy.v1 import auth_pb2, game_pb2, table_pb2

from .harness import CALL_TIMEOUT_S, SECRET, Client, create_request
from .requests import Sent


@dataclass(frozen=True, slots=True)
class Method:
    path: str
    cardinality: Cardinality
    request: type[Message]
    reply: type[Message]


def methods(service: ServiceDescriptor, module: Any) -> dict[str, Method]:
    """Every method of ``service``: its path, its shape and its message classes."""
    found = {}
    for m in service.methods:
        if m.client_streaming:
            raise AssertionError(f"{m.full_name}: no client streams in this API")
        shape = Cardinality.UNARY_STREAM if m.server_streaming else Cardinality.UNARY_UNARY
        found[m.name] = Method(
            f"/{service.full_name}/{m.name}",
            shape,
            getattr(module, m.input_type.name),
            getattr(module, m.output_type.name),
        )
    return found


GAME = methods(game_pb2.DESCRIPTOR.services_by_name["GameService"], game_pb2)
AUTH = methods(auth_pb2.DESCRIPTOR.services_by_name["AuthService"], auth_pb2)
TABLES = methods(tables_pb2.DESCRIPTOR.services_by_name["TableService"], tables_pb2)


async def unary(
    channel: Channel, method: Method, request: Message, metadata: Sequence[tuple[str, str]] = ()
) -> Any:
    assert method.cardinality is Cardinality.UNARY_UNARY
    async with channel.request(
        method.path,
        method.cardinality,
        method.request,
        method.reply,
        timeout=CALL_TIMEOUT_S,
        metadata=metadata,
    ) as stream:
        await stream.send_message(request, end=True)
        reply = await stream.recv_message()
    assert reply is not None
    return reply


def reason(error: GRPCError) -> str | None:
    """The ErrorInfo reason grpclib decoded from the rich status, if any."""
    infos = [d for d in error.details or () if isinstance(d, error_details_pb2.ErrorInfo)]
    return infos[0].reason if infos else None


@dataclass(eq=False)
class GrpclibPlayer(Client):
    channel: Channel
    token: str
    player_id: str
    name: str
    seat: int | None = None
    sent: list[Sent] = field(default_factory=list)

    @property
    def auth(self) -> list[tuple[str, str]]:
        return [("authorization", f"Bearer {self.token}")]

    async def call(self, method: str, request: Message) -> Any:
        return await unary(self.channel, GAME[method], request, self.auth)

    async def watch(self, table_id: str, after: int = 0) -> AsyncIterator[table_pb2.TableEvent]:
        """The Watch server stream, read with grpclib until the server ends it."""
        method = GAME["Watch"]
        assert method.cardinality is Cardinality.UNARY_STREAM
        async with self.channel.request(
            method.path, method.cardinality, method.request, method.reply, metadata=self.auth
        ) as stream:
            await stream.send_message(
                game_pb2.WatchRequest(table_id=table_id, after_seq=after), end=True
            )
            async for reply in stream:
                yield reply.event

    async def refresh(self) -> auth_pb2.RefreshResponse:
        request = auth_pb2.RefreshRequest(token=self.token)
        reply: auth_pb2.RefreshResponse = await unary(
            self.channel, AUTH["Refresh"], request, self.auth
        )
        return reply


async def login(channel: Channel, name: str) -> GrpclibPlayer:
    request = auth_pb2.LoginRequest(device_id=f"device-{uuid.uuid4().hex}", display_name=name)
    reply = await unary(channel, AUTH["Login"], request)
    return GrpclibPlayer(channel, reply.token, reply.player_id, name)


async def create_table(
    channel: Channel, players: Sequence[Client], *, deck_order: Sequence[int] = (), **options: int
) -> str:
    token = issue_service_token("matchmaker", secret=SECRET, now=time.time())
    reply = await unary(
        channel,
        TABLES["CreateTable"],
        create_request(players, deck_order=deck_order, **options),
        [("authorization", f"Bearer {token}")],
    )
    for i, p in enumerate(players):
        p.seat = i
    return str(reply.table_id)
