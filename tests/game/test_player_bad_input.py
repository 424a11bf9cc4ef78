"""PlayerService refuses bad input precisely (page sizes, page tokens, ids,
names, rule sets), answers unknown and foreign ids alike, never sends a device
id, and limits its callers' rate as every other call."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import grpc
import orjson
import pytest

from services.common.errors import error_info
from services.common.limits import Limits
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, player_pb2, player_pb2_grpc
from services.common.wire.reasons import ServiceReason

from .harness import (
    CALL_TIMEOUT_S,
    Player,
    address,
    create_table,
    login,
    play_to_end,
    refused,
    service_auth,
    start_server,
)
from .player_calls import ask, played_game, training_game

INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND


def _token(*values: object) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(list(values))).decode().rstrip("=")


@pytest.mark.parametrize(
    ("method", "request_"),
    [
        ("ListGames", player_pb2.ListGamesRequest(page_size=-1)),
        ("GetLeaderboard", player_pb2.GetLeaderboardRequest(page_size=-5)),
        ("GetReplay", player_pb2.GetReplayRequest(table_id=str(uuid.uuid4()), page_size=-1)),
    ],
)
async def test_a_negative_page_size_is_refused(
    channel: grpc.aio.Channel, method: str, request_: Any
) -> None:
    player = await login(channel, "Neg")
    assert await refused(ask(player, method, request_)) == (
        INVALID,
        ServiceReason.PAGE_SIZE_INVALID,
    )


async def test_a_page_larger_than_the_most_is_the_most(channel: grpc.aio.Channel) -> None:
    player = await login(channel, "Big")
    for _ in range(2):
        await training_game(channel, player)
    page = await ask(player, "ListGames", player_pb2.ListGamesRequest(page_size=2**31 - 1))
    assert len(page.games) == 2 and not page.next_page_token


async def test_tokens_not_given_out_by_the_list_are_refused(channel: grpc.aio.Channel) -> None:
    table_id = await played_game(channel)
    player = await login(channel, "Tok")
    replay = await ask(
        player, "GetReplay", player_pb2.GetReplayRequest(table_id=table_id, page_size=3)
    )
    board_token = _token("top", "cafe", 1500.0, 1, "p-x", 1)
    bad: list[tuple[str, Any]] = [
        ("ListGames", player_pb2.ListGamesRequest(page_token="not a token")),
        ("ListGames", player_pb2.ListGamesRequest(page_token="x" * 600)),
        ("ListGames", player_pb2.ListGamesRequest(page_token=board_token)),
        ("ListGames", player_pb2.ListGamesRequest(page_token=_token("games", player.player_id))),
        (
            "ListGames",
            player_pb2.ListGamesRequest(page_token=_token("games", player.player_id, 1, "no-id")),
        ),
        ("GetLeaderboard", player_pb2.GetLeaderboardRequest(page_token=replay.next_page_token)),
        # A token of cafe's board sent for rami51's.
        (
            "GetLeaderboard",
            player_pb2.GetLeaderboardRequest(ruleset="rami51", page_token=board_token),
        ),
        (
            "GetLeaderboard",
            player_pb2.GetLeaderboardRequest(page_token=_token("top", "cafe", True, 1, "p", 1)),
        ),
        # Numbers no key holds: a rank past uint32, a seq past the database's int8.
        (
            "GetLeaderboard",
            player_pb2.GetLeaderboardRequest(
                page_token=_token("top", "cafe", 1500.0, 1, "p", 2**40)
            ),
        ),
        (
            "GetReplay",
            player_pb2.GetReplayRequest(
                table_id=table_id, page_token=_token("replay", table_id, 2**60)
            ),
        ),
        # Another table's replay token.
        (
            "GetReplay",
            player_pb2.GetReplayRequest(
                table_id=str(uuid.uuid4()), page_token=replay.next_page_token
            ),
        ),
        (
            "GetReplay",
            player_pb2.GetReplayRequest(
                table_id=table_id, page_token=_token("replay", table_id, -3)
            ),
        ),
    ]
    for method, request in bad:
        assert await refused(ask(player, method, request)) == (
            INVALID,
            ServiceReason.PAGE_TOKEN_INVALID,
        ), (method, request)


async def test_ids_that_are_no_ids_are_refused(channel: grpc.aio.Channel) -> None:
    player = await login(channel, "Ids")
    cases: list[tuple[str, Any, str]] = [
        ("GetReplay", player_pb2.GetReplayRequest(table_id="nope"), ServiceReason.TABLE_ID_INVALID),
        ("GetReplay", player_pb2.GetReplayRequest(), ServiceReason.TABLE_ID_INVALID),
        (
            "GetProfile",
            player_pb2.GetProfileRequest(player_id="p" * 129),
            ServiceReason.PLAYER_ID_INVALID,
        ),
        (
            "GetProfile",
            player_pb2.GetProfileRequest(player_id="p-\x00"),
            ServiceReason.PLAYER_ID_INVALID,
        ),
        (
            "UpdateProfile",
            player_pb2.UpdateProfileRequest(display_name="   "),
            ServiceReason.NAME_INVALID,
        ),
        (
            "UpdateProfile",
            player_pb2.UpdateProfileRequest(display_name="x" * 33),
            ServiceReason.NAME_INVALID,
        ),
        (
            "GetLeaderboard",
            player_pb2.GetLeaderboardRequest(ruleset="poker"),
            ServiceReason.RULESET_UNKNOWN,
        ),
    ]
    for method, request, reason in cases:
        assert await refused(ask(player, method, request)) == (INVALID, reason), (method, request)


async def test_unknown_and_foreign_ids_are_answered_alike(channel: grpc.aio.Channel) -> None:
    """NOT_FOUND, one reason and one sentence, whatever the id names or not."""
    player = await login(channel, "Who")
    live = await create_table(channel, [player, await login(channel, "Other")])

    async def replay_refusal(table_id: str) -> tuple[Any, ...]:
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await ask(player, "GetReplay", player_pb2.GetReplayRequest(table_id=table_id))
        return failure.value.code(), failure.value.details(), await _reason(failure.value)

    unknown = await replay_refusal(str(uuid.uuid4()))
    assert unknown[0] == NOT_FOUND and unknown[2] == ServiceReason.GAME_NOT_FOUND
    assert await replay_refusal(live) == unknown, "a game still in play is no finished game"

    async def profile_refusal(player_id: str) -> tuple[Any, ...]:
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await ask(player, "GetProfile", player_pb2.GetProfileRequest(player_id=player_id))
        return failure.value.code(), failure.value.details(), await _reason(failure.value)

    nobody = await profile_refusal("p-0000000000000000")
    assert nobody[0] == NOT_FOUND and nobody[2] == ServiceReason.PLAYER_NOT_FOUND
    assert await profile_refusal("bot-1") == nobody, "a bot is no player"
    assert await profile_refusal(f"device-{uuid.uuid4().hex}") == nobody


async def _reason(error: grpc.aio.AioRpcError) -> str | None:
    info = error_info(error)
    return info.reason if info is not None else None


async def test_no_device_id_ever_leaves_the_server(channel: grpc.aio.Channel) -> None:
    device = f"device-{uuid.uuid4().hex}"
    reply = await auth_pb2_grpc.AuthServiceStub(channel).Login(
        auth_pb2.LoginRequest(device_id=device, display_name="Dev"), timeout=CALL_TIMEOUT_S
    )
    dev = Player(channel, reply.token, reply.player_id, "Dev")
    other = await login(channel, "Oth")
    table_id = await create_table(channel, [dev, other])
    await play_to_end([dev, other], table_id)
    answers = [
        await ask(dev, "GetProfile", player_pb2.GetProfileRequest()),
        await ask(other, "GetProfile", player_pb2.GetProfileRequest(player_id=dev.player_id)),
        await ask(dev, "UpdateProfile", player_pb2.UpdateProfileRequest(display_name="Dev2")),
        await ask(dev, "ListGames", player_pb2.ListGamesRequest()),
        await ask(other, "ListGames", player_pb2.ListGamesRequest()),
        await ask(dev, "GetReplay", player_pb2.GetReplayRequest(table_id=table_id)),
        await ask(other, "GetLeaderboard", player_pb2.GetLeaderboardRequest()),
    ]
    assert len(answers[3].games) == 1 and answers[6].entries
    for answer in answers:
        assert device.encode() not in answer.SerializeToString(), type(answer).__name__


async def test_player_calls_need_a_players_sign_in(channel: grpc.aio.Channel) -> None:
    stub = player_pb2_grpc.PlayerServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await stub.GetProfile(player_pb2.GetProfileRequest(), timeout=CALL_TIMEOUT_S)
    assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert await refused(
        stub.ListGames(player_pb2.ListGamesRequest(), metadata=service_auth())
    ) == (grpc.StatusCode.PERMISSION_DENIED, ServiceReason.PLAYER_CREDENTIAL_REQUIRED)


async def test_player_calls_are_rate_limited(fresh_dsn: str) -> None:
    server = await start_server(
        fresh_dsn, limits=Limits(player_rate=0.5, player_burst=3, peer_rate=0)
    )
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            player = await login(channel, "Fast")
            for _ in range(3):  # the burst; sign-in is charged to the connection alone
                await ask(player, "GetProfile", player_pb2.GetProfileRequest())
            assert await refused(
                ask(player, "GetLeaderboard", player_pb2.GetLeaderboardRequest())
            ) == (grpc.StatusCode.RESOURCE_EXHAUSTED, ServiceReason.RATE_LIMITED)
    finally:
        await server.stop(0)
