"""The client's channels load the API's service config (proto/service_config.json):
gRPC makes a call that met UNAVAILABLE again by itself, so the client, and the
player, never see a blip; an action is made again with its request id, and the
server applies it once."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import grpc

from clients.cli.connection import Connection
from services.common import errors
from services.common.pb.rummy.v1 import game_pb2
from services.common.wire.reasons import ServiceReason
from tests.game.harness import (
    LONG_TURNS_MS,
    Player,
    address,
    create_table,
    login,
    play_turns,
    start_server,
)
from tests.routing import routed_server

GET_TABLE = "/rummy.v1.GameService/GetTable"
DRAW_STOCK = "/rummy.v1.GameService/DrawStock"
OUTAGE = errors.rich_status(
    grpc.StatusCode.UNAVAILABLE,
    ServiceReason.DATABASE_UNAVAILABLE,
    "The game is briefly unavailable: try again in a moment.",
)


@contextlib.asynccontextmanager
async def flaky(
    target: str, method: str, *, applied: bool
) -> AsyncIterator[tuple[str, Counter[str]]]:
    """A real server passing every unary call on to ``target``, except that the first
    call of ``method`` answers UNAVAILABLE, as the game does when its database is
    away: ``applied``, after passing it on (the answer lost on its way back).
    Yields its address and the calls it was asked, by method."""
    asked: Counter[str] = Counter()
    upstream = grpc.aio.insecure_channel(target)

    def route(name: str) -> Any:
        asked[name] += 1
        call = upstream.unary_unary(name)
        failing = name == method and asked[name] == 1

        async def handle(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            if failing and not applied:
                await context.abort_with_status(OUTAGE)
            try:
                reply: bytes = await call(request, metadata=context.invocation_metadata())
            except grpc.aio.AioRpcError as error:
                await context.abort(
                    error.code(), error.details() or "", tuple(error.trailing_metadata() or ())
                )
            if failing:
                await context.abort_with_status(OUTAGE)
            return reply

        return grpc.unary_unary_rpc_method_handler(handle)

    try:
        async with routed_server(route) as through:
            yield through, asked
    finally:
        await upstream.close()


async def signed_in(
    target: str, device: str, *, channels: Any = None
) -> tuple[Connection, list[str]]:
    """A client signed in at ``target``, and what it tells the player."""
    notes: list[str] = []
    conn = Connection(target, device, "Ada", notify=notes.append, channels=channels)
    await conn.login()
    return conn, notes


async def test_a_read_that_meets_unavailable_once_is_one_call_for_the_client(
    fresh_dsn: str,
) -> None:
    server = await start_server(fresh_dsn)
    try:
        async with (
            grpc.aio.insecure_channel(address(server)) as direct,
            flaky(address(server), GET_TABLE, applied=False) as (through, asked),
        ):
            players = [await login(direct, f"P{i}") for i in range(2)]
            table_id = await create_table(direct, players, turn_timer_ms=LONG_TURNS_MS)
            conn, notes = await signed_in(through, "device-retries-1")
            try:
                view = await conn.view(table_id)
            finally:
                await conn.close()
            first_try = asked[GET_TABLE]

            # The same outage met by a channel without the service config: the
            # client sees it, and tells the player (so the front did fail the call).
            async with grpc.aio.insecure_channel(through) as bare:
                asked[GET_TABLE] = 0
                other, told = await signed_in(through, "device-retries-2", channels={through: bare})
                try:
                    await other.view(table_id)
                finally:
                    await other.close()
    finally:
        await server.stop(0)

    assert view.table_id == table_id
    assert first_try == 2, "failed once, then made again by gRPC"
    assert notes == [], "the client never saw the outage"
    assert told == [f"Cannot reach {through}: trying again…", "Connection back."]


async def test_an_action_whose_answer_was_lost_is_made_again_and_applied_once(
    fresh_dsn: str,
) -> None:
    server = await start_server(fresh_dsn)
    try:
        async with (
            grpc.aio.insecure_channel(address(server)) as direct,
            flaky(address(server), DRAW_STOCK, applied=True) as (through, asked),
        ):
            conn, notes = await signed_in(through, "device-retries-3")
            try:
                me = Player(direct, conn.token, conn.player_id, conn.name)
                players = [me, await login(direct, "Bob")]
                table_id = await create_table(direct, players, turn_timer_ms=LONG_TURNS_MS)
                before = await me.view(table_id)
                if before.current_seat != me.seat:
                    await play_turns(players, table_id, 1)
                    before = await me.view(table_id)
                reply = await conn.act("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
                after = await me.view(table_id)
            finally:
                await conn.close()
    finally:
        await server.stop(0)

    assert asked[DRAW_STOCK] == 2, "the first answer lost, the call made again"
    assert notes == [], "the client never saw the outage"
    assert reply.version == after.version == before.version + 1, "applied once"
    assert len(after.hand) == len(before.hand) + 1
