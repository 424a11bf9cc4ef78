"""The interceptor's identity checks on a real grpc.aio server (port 0) with real clients."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import grpc
import pytest
import pytest_asyncio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from services.common.auth import issue_service_token, issue_token
from services.common.decoding import MAX_REQUEST_BYTES
from services.common.errors import DOMAIN, error_info
from services.common.identity import (
    current_player_id,
    log_context,
    require_player,
    require_service,
)
from services.common.interceptors import Gate
from services.common.limits import Limits
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import (
    auth_pb2,
    auth_pb2_grpc,
    game_pb2,
    game_pb2_grpc,
    matchmaker_pb2,
    matchmaker_pb2_grpc,
    table_pb2,
)
from services.common.serving import MAX_RECEIVE_BYTES, server_options

pytestmark = pytest.mark.asyncio(loop_scope="session")

SECRET = "interceptor-test-secret-0123456789abcdef"
UNLIMITED = Limits(player_rate=0, peer_rate=0, streams_per_player=0, streams_per_replica=0)
TIMEOUT_S = 5
SLOW_EVENT_S = 2.2
"""Longer than a 2 s token has left once the stream is open."""


class Auth(auth_pb2_grpc.AuthServiceServicer):
    async def Login(self, request: Any, context: Any) -> auth_pb2.LoginResponse:
        token = issue_token(request.device_id, secret=SECRET, now=time.time())
        return auth_pb2.LoginResponse(token=token, player_id=request.device_id)


class Tables(tables_pb2_grpc.TableServiceServicer):
    async def CreateTable(self, request: Any, context: Any) -> tables_pb2.CreateTableResponse:
        claims = await require_service(context)
        return tables_pb2.CreateTableResponse(table_id=claims.subject)


class Game(game_pb2_grpc.GameServiceServicer):
    async def GetTable(self, request: Any, context: Any) -> game_pb2.GetTableResponse:
        player_id = await require_player(context)
        if request.table_id == "boom":
            raise KeyError("internal-detail")  # a server bug
        # Yield to the loop so concurrent calls interleave before reading again.
        await asyncio.sleep(0.01)
        assert current_player_id() == player_id
        seat = table_pb2.SeatView(player_id=current_player_id())
        # What a log line written now would carry, sent back for the test to read.
        context.set_trailing_metadata(
            tuple((k, str(v)) for k, v in log_context(None, "info", {}).items())
        )
        return game_pb2.GetTableResponse(view=table_pb2.TableView(seats=[seat]))

    async def Watch(self, request: Any, context: Any) -> AsyncIterator[game_pb2.WatchResponse]:
        # An async-generator stream handler; the "slow" table's second event comes late.
        for seq in (1, 2):
            await asyncio.sleep(SLOW_EVENT_S if request.table_id == "slow" and seq == 2 else 0)
            if request.table_id == "boom" and seq == 2:
                raise KeyError("internal-detail")  # a server bug
            yield game_pb2.WatchResponse(event=table_pb2.TableEvent(seq=seq))
        context.set_trailing_metadata((("player-id", current_player_id()),))


class Matchmaker(matchmaker_pb2_grpc.MatchmakerServiceServicer):
    async def Enqueue(self, request: Any, context: Any) -> None:
        # A coroutine stream handler that writes through the context; a table of
        # 3 gets a second message late.
        ticket = matchmaker_pb2.Ticket(ticket_id=current_player_id())
        await context.write(matchmaker_pb2.EnqueueResponse(ticket=ticket))
        if request.table_size == 3:
            await asyncio.sleep(SLOW_EVENT_S)
            await context.write(matchmaker_pb2.EnqueueResponse(ticket=ticket))


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    # The services' own options: the size limits are part of what is tested.
    server = grpc.aio.server(
        interceptors=[Gate(UNLIMITED, secret=SECRET)], options=server_options()
    )
    auth_pb2_grpc.add_AuthServiceServicer_to_server(Auth(), server)
    game_pb2_grpc.add_GameServiceServicer_to_server(Game(), server)
    tables_pb2_grpc.add_TableServiceServicer_to_server(Tables(), server)
    matchmaker_pb2_grpc.add_MatchmakerServiceServicer_to_server(Matchmaker(), server)
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    names = (
        auth_pb2.DESCRIPTOR.services_by_name["AuthService"].full_name,
        game_pb2.DESCRIPTOR.services_by_name["GameService"].full_name,
        reflection.SERVICE_NAME,
        health.SERVICE_NAME,
    )
    reflection.enable_server_reflection(names, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield channel
    finally:
        await server.stop(None)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def player_token(player_id: str, *, now: float | None = None, ttl_s: int = 600) -> str:
    now = time.time() if now is None else now
    return issue_token(player_id, secret=SECRET, ttl_s=ttl_s, now=now)


async def refusal(call: Awaitable[Any]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    info = error_info(caught.value)
    assert info is not None, caught.value
    assert info.domain == DOMAIN
    assert caught.value.details(), "a player-readable message"
    return caught.value.code(), info.reason


async def test_login_needs_no_token(channel: grpc.aio.Channel) -> None:
    stub = auth_pb2_grpc.AuthServiceStub(channel)
    reply = await stub.Login(auth_pb2.LoginRequest(device_id="dev-1"), timeout=TIMEOUT_S)
    assert reply.player_id == "dev-1"
    game = game_pb2_grpc.GameServiceStub(channel)
    view = await game.GetTable(
        game_pb2.GetTableRequest(), metadata=bearer(reply.token), timeout=TIMEOUT_S
    )
    assert view.view.seats[0].player_id == "dev-1"


async def test_health_and_reflection_need_no_token(channel: grpc.aio.Channel) -> None:
    health_stub = health_pb2_grpc.HealthStub(channel)
    status = await health_stub.Check(health_pb2.HealthCheckRequest(), timeout=TIMEOUT_S)
    assert status.status == health_pb2.HealthCheckResponse.SERVING

    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    names = set()
    async for response in stub.ServerReflectionInfo(iter([request]), timeout=TIMEOUT_S):
        names |= {service.name for service in response.list_services_response.service}
    assert {"rummy.v1.GameService", "rummy.v1.AuthService"} <= names


@pytest.mark.parametrize(
    ("metadata", "reason"),
    [
        ((), "TOKEN_MISSING"),
        ((("authorization", "Bearer "),), "TOKEN_MISSING"),
        ((("authorization", "Basic dXNlcjpwdw=="),), "TOKEN_INVALID"),
        (bearer("not-a-jwt"), "TOKEN_INVALID"),
        (bearer(issue_token("p", secret="x" * 32, now=time.time())), "TOKEN_INVALID"),
        (bearer(player_token("p", now=time.time() - 7200, ttl_s=3600)), "TOKEN_EXPIRED"),
    ],
    ids=["none", "empty", "basic", "malformed", "forged", "expired"],
)
async def test_refused_tokens(
    channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...], reason: str
) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    unary = game.GetTable(game_pb2.GetTableRequest(), metadata=metadata, timeout=TIMEOUT_S)
    assert await refusal(unary) == (grpc.StatusCode.UNAUTHENTICATED, reason)

    stream = game.Watch(game_pb2.WatchRequest(), metadata=metadata, timeout=TIMEOUT_S)
    assert await refusal(stream.read()) == (grpc.StatusCode.UNAUTHENTICATED, reason)


async def test_streams_see_the_caller(channel: grpc.aio.Channel) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    call = game.Watch(game_pb2.WatchRequest(), metadata=bearer(player_token("ann")))
    seqs = [response.event.seq async for response in call]
    assert seqs == [1, 2]
    assert ("player-id", "ann") in list(await call.trailing_metadata())

    matchmaker = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
    enqueue = matchmaker.Enqueue(
        matchmaker_pb2.EnqueueRequest(table_size=2), metadata=bearer(player_token("bob"))
    )
    tickets = [response.ticket.ticket_id async for response in enqueue]
    assert tickets == ["bob"]


async def test_a_stream_ends_when_its_token_expires(channel: grpc.aio.Channel) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    token = player_token("ann", ttl_s=2)  # expires 1 to 2 s from now
    call = game.Watch(
        game_pb2.WatchRequest(table_id="slow"), metadata=bearer(token), timeout=TIMEOUT_S
    )
    first = await call.read()
    assert first.event.seq == 1  # sent while the token was good
    # The second event comes after the expiry: the stream ends instead of sending it.
    assert await refusal(call.read()) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")

    # A fresh token resumes the same stream whole.
    again = game.Watch(game_pb2.WatchRequest(table_id="slow"), metadata=bearer(player_token("ann")))
    assert [response.event.seq async for response in again] == [1, 2]


async def test_a_waiting_stream_outlives_its_token(channel: grpc.aio.Channel) -> None:
    # Closing a matchmaking stream gives up the ticket: expiry must not do it.
    matchmaker = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
    enqueue = matchmaker.Enqueue(
        matchmaker_pb2.EnqueueRequest(table_size=3),
        metadata=bearer(player_token("bob", ttl_s=2)),
        timeout=TIMEOUT_S,
    )
    assert [response.ticket.ticket_id async for response in enqueue] == ["bob", "bob"]


async def test_a_server_bug_is_internal_with_a_reason_and_no_detail(
    channel: grpc.aio.Channel,
) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    auth = bearer(player_token("ann"))
    unary = game.GetTable(game_pb2.GetTableRequest(table_id="boom"), metadata=auth)
    stream = game.Watch(game_pb2.WatchRequest(table_id="boom"), metadata=auth)
    assert (await stream.read()).event.seq == 1
    for failed in (unary, stream.read()):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await failed
        info = error_info(caught.value)
        assert caught.value.code() == grpc.StatusCode.INTERNAL
        assert info is not None and info.reason == "INTERNAL"
        assert "internal-detail" not in (caught.value.details() or "")
        assert "KeyError" not in (caught.value.details() or "")


async def test_concurrent_callers_never_see_each_other(channel: grpc.aio.Channel) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    players = [f"player-{n}" for n in range(40)]
    replies = await asyncio.gather(
        *(
            game.GetTable(
                game_pb2.GetTableRequest(), metadata=bearer(player_token(p)), timeout=TIMEOUT_S
            )
            for p in players
        )
    )
    assert [reply.view.seats[0].player_id for reply in replies] == players


async def test_service_credential_for_internal_calls(channel: grpc.aio.Channel) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    tables = tables_pb2_grpc.TableServiceStub(channel)
    service = issue_service_token("matchmaker", secret=SECRET, now=time.time())
    created = await tables.CreateTable(
        tables_pb2.CreateTableRequest(), metadata=bearer(service), timeout=TIMEOUT_S
    )
    assert created.table_id == "matchmaker"

    as_player = tables.CreateTable(
        tables_pb2.CreateTableRequest(), metadata=bearer(player_token("p")), timeout=TIMEOUT_S
    )
    assert await refusal(as_player) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "SERVICE_CREDENTIAL_REQUIRED",
    )

    as_service = game.GetTable(game_pb2.GetTableRequest(), metadata=bearer(service))
    assert await refusal(as_service) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "PLAYER_CREDENTIAL_REQUIRED",
    )


def sized(size: int) -> game_pb2.GetTableRequest:
    """A request of exactly ``size`` bytes on the wire."""
    framing = game_pb2.GetTableRequest(table_id="t" * size).ByteSize() - size
    request = game_pb2.GetTableRequest(table_id="t" * (size - framing))
    assert request.ByteSize() == size
    return request


async def test_requests_over_the_limit_are_refused_unread_with_a_reason(
    channel: grpc.aio.Channel,
) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    auth = bearer(player_token("p"))
    at_limit = await game.GetTable(sized(MAX_REQUEST_BYTES), metadata=auth, timeout=TIMEOUT_S)
    assert at_limit.view.seats[0].player_id == "p"

    too_large = (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_TOO_LARGE")
    for size in (MAX_REQUEST_BYTES + 1, MAX_RECEIVE_BYTES):
        unary = game.GetTable(sized(size), metadata=auth, timeout=TIMEOUT_S)
        assert await refusal(unary) == too_large, size
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await game.GetTable(sized(MAX_REQUEST_BYTES + 1), metadata=auth, timeout=TIMEOUT_S)
    info = error_info(caught.value)
    assert info is not None and info.metadata["max_bytes"] == str(MAX_REQUEST_BYTES)

    stream = game.Watch(
        game_pb2.WatchRequest(table_id="t" * MAX_REQUEST_BYTES), metadata=auth, timeout=TIMEOUT_S
    )
    assert await refusal(stream.read()) == too_large
    matchmaker = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
    enqueue = matchmaker.Enqueue(
        matchmaker_pb2.EnqueueRequest(ruleset="c" * MAX_REQUEST_BYTES),
        metadata=auth,
        timeout=TIMEOUT_S,
    )
    assert await refusal(enqueue.read()) == too_large


async def test_requests_over_the_hard_cap_are_refused_by_grpc(channel: grpc.aio.Channel) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    call = game.GetTable(
        sized(MAX_RECEIVE_BYTES + 1), metadata=bearer(player_token("p")), timeout=TIMEOUT_S
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert error_info(caught.value) is None, "gRPC refused it before any code of ours"


async def test_unknown_methods_stay_unimplemented(channel: grpc.aio.Channel) -> None:
    # The servicer does not implement Discard: the base class answers, after auth.
    game = game_pb2_grpc.GameServiceStub(channel)
    call = game.Discard(
        game_pb2.DiscardRequest(), metadata=bearer(player_token("p")), timeout=TIMEOUT_S
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() is grpc.StatusCode.UNIMPLEMENTED


async def test_log_lines_carry_the_call_s_request_id_method_and_caller(
    channel: grpc.aio.Channel,
) -> None:
    game = game_pb2_grpc.GameServiceStub(channel)
    metadata = (*bearer(player_token("logged-player")), ("x-request-id", "req-42"))
    call = game.GetTable(game_pb2.GetTableRequest(), metadata=metadata, timeout=TIMEOUT_S)
    await call
    trailing = dict(await call.trailing_metadata())
    assert trailing["request_id"] == "req-42"
    assert trailing["rpc"] == "GetTable"
    assert trailing["caller"] == "logged-player"
