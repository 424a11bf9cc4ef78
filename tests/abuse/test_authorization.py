"""The authorization matrix: every RPC of GameService, MatchmakerService and the
services' TableService called with another player's token, an expired one, a
forged one and none."""

from __future__ import annotations

import time
from typing import Any

import grpc
from google.protobuf import symbol_database

from services.common.auth import issue_token
from services.common.errors import error_info
from services.common.pb.rummy.internal.v1 import tables_pb2
from services.common.pb.rummy.v1 import game_pb2, matchmaker_pb2
from tests.game.harness import SECRET, create_table, login
from tests.matchmaker.harness import backend, stub

FORGED_SECRET = "a-secret-the-servers-have-never-seen-1234"
UNAUTH = grpc.StatusCode.UNAUTHENTICATED
DENIED = grpc.StatusCode.PERMISSION_DENIED

# What another signed-in player (not seated, not the ticket's owner) gets.
OTHER_PLAYER = {
    "CreateTable": (DENIED, "SERVICE_CREDENTIAL_REQUIRED"),
    "CreateTables": (DENIED, "SERVICE_CREDENTIAL_REQUIRED"),
    "GetTable": (grpc.StatusCode.OK, None),  # a spectator's view: no hidden card
    "Watch": (grpc.StatusCode.OK, None),  # the same, as a stream
    "GetTicket": (grpc.StatusCode.NOT_FOUND, "TICKET_NOT_FOUND"),
    "Cancel": (grpc.StatusCode.NOT_FOUND, "TICKET_NOT_FOUND"),
}
OWN_ACTIONS = {"Enqueue", "CreatePrivateTable", "JoinPrivateTable"}
"""Calls a player makes for themself: another player's token is just that player."""


def _request(method: Any, table_id: str, ticket_id: str) -> Any:
    cls = symbol_database.Default().GetSymbol(method.input_type.full_name)
    fields = {f.name for f in cls.DESCRIPTOR.fields}
    values: dict[str, Any] = {}
    if "table_id" in fields:
        values["table_id"] = table_id
    if "ticket_id" in fields:
        values["ticket_id"] = ticket_id
    if "table_size" in fields:
        values["table_size"] = 2
    if "replacement_card_ids" in fields:
        values["replacement_card_ids"] = [0]  # well formed, so only the caller is wrong
    return cls(**values)


async def _call(
    channel: grpc.aio.Channel,
    service: Any,
    method: Any,
    request: Any,
    metadata: tuple[tuple[str, str], ...],
) -> tuple[grpc.StatusCode, str | None]:
    out = symbol_database.Default().GetSymbol(method.output_type.full_name)
    path = f"/{service.full_name}/{method.name}"
    try:
        if method.server_streaming:
            call = channel.unary_stream(
                path,
                request_serializer=type(request).SerializeToString,
                response_deserializer=out.FromString,
            )
            stream = call(request, metadata=metadata, timeout=5)
            await stream.read()
            stream.cancel()
        else:
            call = channel.unary_unary(
                path,
                request_serializer=type(request).SerializeToString,
                response_deserializer=out.FromString,
            )
            await call(request, metadata=metadata, timeout=5)
    except grpc.aio.AioRpcError as error:
        info = error_info(error)
        return error.code(), info.reason if info is not None else None
    return grpc.StatusCode.OK, None


async def test_every_rpc_refuses_bad_or_foreign_credentials(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        mm_channel = b.channel()
        game_channel = grpc.aio.insecure_channel(f"127.0.0.1:{b.game.port}")
        try:
            owner, seated, outsider, queuer = [
                await login(mm_channel, n) for n in ("O", "S", "X", "Q")
            ]
            table_id = await create_table(game_channel, [owner, seated])
            stream = stub(queuer).Enqueue(
                matchmaker_pb2.EnqueueRequest(table_size=4), metadata=queuer.auth
            )
            ticket_id = (await stream.read()).ticket.ticket_id
            now = time.time()
            expired = issue_token(seated.player_id, secret=SECRET, ttl_s=60, now=now - 86_400)
            forged = issue_token(seated.player_id, secret=FORGED_SECRET, now=now)
            credentials = {
                "none": ((), (UNAUTH, "TOKEN_MISSING")),
                "expired": ((("authorization", f"Bearer {expired}"),), (UNAUTH, "TOKEN_EXPIRED")),
                "forged": ((("authorization", f"Bearer {forged}"),), (UNAUTH, "TOKEN_INVALID")),
            }
            checked = 0
            served = (
                (game_pb2, game_channel),
                (tables_pb2, game_channel),
                (matchmaker_pb2, mm_channel),
            )
            for module, channel in served:
                for service in module.DESCRIPTOR.services_by_name.values():
                    for method in service.methods:
                        request = _request(method, table_id, ticket_id)
                        for name, (metadata, expected) in credentials.items():
                            got = await _call(channel, service, method, request, metadata)
                            assert got == expected, (method.name, name, got)
                            checked += 1
                        if method.name in OWN_ACTIONS:
                            continue
                        expected = OTHER_PLAYER.get(method.name, (DENIED, "NOT_SEATED"))
                        got = await _call(channel, service, method, request, outsider.auth)
                        assert got == expected, (method.name, "another player", got)
                        checked += 1
            assert checked >= 4 * (12 + 2 + 2) + 3 * 3
            stream.cancel()
        finally:
            await game_channel.close()
