"""A refusal that may be retried carries a `google.rpc.RetryInfo` (AIP-194), the
wait gRPC stacks understand, the same as `retry_after_ms` where the ErrorInfo
says it; one that would only be refused again carries none. Read back as any
app does, with `rpc_status.from_call`, from real servers."""

from __future__ import annotations

import uuid

import asyncpg
import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from scripts.api_docs.reasons import code_reasons
from services.common.errors import RETRY_AFTER, RETRY_AFTER_MS, retry_delay_ms
from services.common.limits import Limits
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, game_pb2
from services.common.wire.reasons import ServiceReason
from tests.game.harness import CALL_TIMEOUT_S, address, create_table, login, start_server

RETRIED = {
    "RATE_LIMITED",
    "SERVER_FULL",
    "DATABASE_UNAVAILABLE",
    "SERVER_STOPPING",
    "RESUME_REQUIRED",
    "INVITE_CODES_EXHAUSTED",
    "CONFLICT",
}
"""Every reason a service sends that asks for the same call again, later."""


def details(
    error: grpc.aio.AioRpcError,
) -> tuple[error_details_pb2.ErrorInfo, error_details_pb2.RetryInfo | None]:
    """The failed call's ErrorInfo, and its RetryInfo if it has one."""
    status = rpc_status.from_call(error)
    assert status is not None, error
    infos, retries = [], []
    for detail in status.details:
        info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
        if detail.Unpack(info):
            infos.append(info)
        elif detail.Unpack(retry):
            retries.append(retry)
        else:
            raise AssertionError(f"an unexpected detail: {detail.type_url}")
    assert len(infos) == 1 and len(retries) <= 1, status
    return infos[0], (retries[0] if retries else None)


async def failed(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await call  # type: ignore[misc]
    return failure.value


async def test_a_rate_limited_call_carries_retry_info_of_its_wait(fresh_dsn: str) -> None:
    limits = Limits(player_rate=0, peer_rate=0.5, peer_burst=1)
    server = await start_server(fresh_dsn, limits=limits)
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            auth = auth_pb2_grpc.AuthServiceStub(channel)
            request = auth_pb2.LoginRequest(device_id="device-retry-info", display_name="Ada")
            await auth.Login(request, timeout=CALL_TIMEOUT_S)
            error = await failed(auth.Login(request, timeout=CALL_TIMEOUT_S))
    finally:
        await server.stop(0)

    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info, retry = details(error)
    assert info.reason == ServiceReason.RATE_LIMITED
    assert retry is not None, "a rate limit says when to come back"
    wait_ms = int(info.metadata[RETRY_AFTER])
    assert wait_ms > 0
    assert retry.retry_delay.ToMilliseconds() == wait_ms


async def test_an_outage_carries_retry_info_and_a_refused_move_none(fresh_dsn: str) -> None:
    server = await start_server(fresh_dsn, lock_timeout_s=0.2)
    holder = await asyncpg.connect(fresh_dsn)
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            players = [await login(channel, f"P{i}") for i in range(2)]
            table_id = await create_table(channel, players)
            view = await players[0].view(table_id)
            mover = next(p for p in players if p.seat == view.current_seat)
            waiting = next(p for p in players if p is not mover)
            draw = game_pb2.DrawStockRequest(table_id=table_id)
            not_yours = await failed(waiting.call("DrawStock", draw))
            async with holder.transaction():  # a session stuck holding the table's row
                await holder.execute(
                    "SELECT 1 FROM tables WHERE id = $1 FOR UPDATE", uuid.UUID(table_id)
                )
                outage = await failed(mover.call("DrawStock", draw))
    finally:
        await holder.close()
        await server.stop(0)

    assert outage.code() == grpc.StatusCode.UNAVAILABLE
    info, retry = details(outage)
    assert info.reason == ServiceReason.DATABASE_UNAVAILABLE
    assert retry is not None
    assert retry.retry_delay.ToMilliseconds() == RETRY_AFTER_MS[info.reason]

    assert not_yours.code() == grpc.StatusCode.FAILED_PRECONDITION
    info, retry = details(not_yours)
    assert info.reason == "NOT_YOUR_TURN"
    assert retry is None, "the same move would be refused again"


def test_the_reasons_that_carry_a_wait_are_those_that_ask_for_the_same_call_again() -> None:
    # Every refusal of the services' code, with its status codes and metadata keys
    # (as docs/api/errors.md lists them).
    found = code_reasons()
    waits = {
        reason: {
            retry_delay_ms(grpc.StatusCode[code], reason, dict.fromkeys(info.metadata, "250"))
            for code in info.codes
        }
        for reason, info in found.items()
    }
    assert {reason for reason, delays in waits.items() if delays != {None}} == RETRIED
    assert all(None not in waits[reason] for reason in RETRIED), "whatever the status code"
    assert waits["RATE_LIMITED"] == waits["SERVER_FULL"] == {250}, "the metadata's own wait"
