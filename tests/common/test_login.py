"""Login against a real server: the device id is what `auth.proto` says it is
(8 to 128 visible ASCII characters, taken as sent), the name is tidied."""

from __future__ import annotations

import grpc
import pytest

from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc
from tests.game.harness import refused, start_server


@pytest.fixture
async def auth(fresh_dsn: str):  # type: ignore[no-untyped-def]
    server = await start_server(fresh_dsn)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            yield auth_pb2_grpc.AuthServiceStub(channel)
    finally:
        await server.stop(0)


@pytest.mark.parametrize(
    "device",
    [
        "short-7",  # 7 characters
        "d" * 129,
        "appareil-de-zoé",  # not ASCII
        " cli-padded-id ",  # padded: not trimmed into another device's id
        "two words here",  # a space is no visible character
        "tab\there-1234",
    ],
)
async def test_a_device_id_outside_the_contract_is_refused(
    auth: auth_pb2_grpc.AuthServiceAsyncStub, device: str
) -> None:
    code, reason = await refused(
        auth.Login(auth_pb2.LoginRequest(device_id=device, display_name="Ana"))
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "DEVICE_ID_INVALID")


async def test_a_device_id_is_one_player_exactly_as_sent(
    auth: auth_pb2_grpc.AuthServiceAsyncStub,
) -> None:
    device = "cli-0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
    first = await auth.Login(auth_pb2.LoginRequest(device_id=device, display_name="  Ana  "))
    again = await auth.Login(auth_pb2.LoginRequest(device_id=device, display_name="Ana B"))
    other = await auth.Login(auth_pb2.LoginRequest(device_id=device.upper(), display_name="Bo"))
    assert first.player_id == again.player_id != other.player_id
    widest = "!" + "~" * 127  # the first and last visible ASCII characters, 128 of them
    assert (await auth.Login(auth_pb2.LoginRequest(device_id=widest, display_name="Cy"))).token


async def test_the_refusal_says_what_a_device_id_is(
    auth: auth_pb2_grpc.AuthServiceAsyncStub,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await auth.Login(auth_pb2.LoginRequest(device_id="appareil-é-1234", display_name="Zoé"))
    assert "8 to 128" in (failure.value.details() or "")
