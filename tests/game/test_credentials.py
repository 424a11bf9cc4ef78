"""Tokens on a live table: expired, forged, missing or of the wrong kind are
refused before anything runs, with the reason an app switches on, and the
table is left as it was."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from typing import Any

import grpc
import jwt

from services.common.auth import issue_service_token, issue_token
from services.common.pb.rummy.internal.v1 import tables_pb2_grpc
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, game_pb2, game_pb2_grpc, table_pb2

from .harness import SECRET, WAIT_S, create_request, create_table, login, refused, snapshot
from .stored import table_db

UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
PLAYER_CONNECTION = table_pb2.EVENT_KIND_PLAYER_CONNECTION
DAY_S = 24 * 3600


def bearer(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


def resigned(token: str, **claims: Any) -> str:
    """``token`` with some claims changed and the original signature kept."""
    head, body, signature = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload.update(claims)
    text = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return f"{head}.{text}.{signature}"


Credentials = tuple[tuple[str, str], ...]


def bad_credentials(
    player_id: str, token: str, other_token: str
) -> list[tuple[str, Credentials, grpc.StatusCode, str]]:
    """Ways to call as ``player_id`` without a valid player token of theirs."""
    now = time.time()
    other_secret = "another-secret-that-is-long-enough-too"
    return [
        ("no token", (), UNAUTHENTICATED, "TOKEN_MISSING"),
        (
            "expired",
            bearer(issue_token(player_id, secret=SECRET, ttl_s=60, now=now - DAY_S)),
            UNAUTHENTICATED,
            "TOKEN_EXPIRED",
        ),
        (
            "signed with another secret",
            bearer(issue_token(player_id, secret=other_secret, now=now)),
            UNAUTHENTICATED,
            "TOKEN_INVALID",
        ),
        (
            "other player's token with my id written in",
            bearer(resigned(other_token, sub=player_id)),
            UNAUTHENTICATED,
            "TOKEN_INVALID",
        ),
        (
            "expiry pushed back by hand",
            bearer(resigned(token, exp=int(now) + 10 * DAY_S)),
            UNAUTHENTICATED,
            "TOKEN_INVALID",
        ),
        (
            "unsigned",
            bearer(
                jwt.encode(
                    {
                        "iss": "rummy",
                        "sub": player_id,
                        "role": "player",
                        "iat": int(now),
                        "exp": int(now) + 60,
                        "jti": "x",
                    },
                    key=None,
                    algorithm="none",
                )
            ),
            UNAUTHENTICATED,
            "TOKEN_INVALID",
        ),
        ("garbage", bearer("not.a.token"), UNAUTHENTICATED, "TOKEN_INVALID"),
        (
            "not a bearer",
            (("authorization", f"Basic {token}"),),
            UNAUTHENTICATED,
            "TOKEN_INVALID",
        ),
        (
            "service credential acting as a player",
            bearer(issue_service_token("matchmaker", secret=SECRET, now=now)),
            grpc.StatusCode.PERMISSION_DENIED,
            "PLAYER_CREDENTIAL_REQUIRED",
        ),
    ]


async def test_bad_tokens_are_refused_and_change_nothing(
    channel: grpc.aio.Channel, fresh_dsn: str, subtests: Any
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    me, other = players
    table_id = await create_table(channel, players)
    cases = bad_credentials(me.player_id, me.token, other.token)
    stub = game_pb2_grpc.GameServiceStub(channel)
    draw = game_pb2.DrawStockRequest(table_id=table_id)
    async with table_db(fresh_dsn) as db:
        before = await snapshot(players, table_id), await db.log(table_id)
        for name, metadata, code, reason in cases:
            with subtests.test(msg=name):
                assert await refused(stub.DrawStock(draw, metadata=metadata)) == (code, reason)
                assert await refused(
                    stub.GetTable(game_pb2.GetTableRequest(table_id=table_id), metadata=metadata)
                ) == (code, reason)
                assert (await snapshot(players, table_id), await db.log(table_id)) == before


async def test_only_the_service_credential_creates_tables(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    stub = tables_pb2_grpc.TableServiceStub(channel)
    request = create_request(players)
    async with table_db(fresh_dsn) as db:
        assert await refused(stub.CreateTable(request, metadata=bearer(players[0].token))) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "SERVICE_CREDENTIAL_REQUIRED",
        )
        assert await refused(stub.CreateTable(request)) == (UNAUTHENTICATED, "TOKEN_MISSING")
        assert await db.count_tables() == 0
        await create_table(channel, players)
        assert await db.count_tables() == 1


async def test_a_move_is_refused_to_the_service_credential_before_its_body_is_read(
    channel: grpc.aio.Channel,
) -> None:
    """Who asks is judged first, for every move: a malformed body does not change
    the answer to a caller who may not move at all."""
    players = [await login(channel, f"P{i}") for i in range(2)]
    table_id = await create_table(channel, players)
    stub = game_pb2_grpc.GameServiceStub(channel)
    service = bearer(issue_service_token("matchmaker", secret=SECRET, now=time.time()))
    malformed = [
        stub.Meld(game_pb2.MeldRequest(table_id=table_id), metadata=service),
        stub.LayOff(game_pb2.LayOffRequest(table_id=table_id), metadata=service),
        stub.SwapJoker(game_pb2.SwapJokerRequest(table_id=table_id), metadata=service),
    ]
    for call in malformed:
        assert await refused(call) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "PLAYER_CREDENTIAL_REQUIRED",
        )


async def test_refresh_needs_the_callers_own_valid_token(channel: grpc.aio.Channel) -> None:
    me, other = await login(channel, "Me"), await login(channel, "Other")
    stub = auth_pb2_grpc.AuthServiceStub(channel)
    mixed = stub.Refresh(auth_pb2.RefreshRequest(token=other.token), metadata=me.auth)
    assert await refused(mixed) == (UNAUTHENTICATED, "TOKEN_INVALID")
    expired = issue_token(me.player_id, secret=SECRET, ttl_s=60, now=time.time() - DAY_S)
    stale = stub.Refresh(auth_pb2.RefreshRequest(token=expired), metadata=bearer(expired))
    assert await refused(stale) == (UNAUTHENTICATED, "TOKEN_EXPIRED")
    fresh = await stub.Refresh(auth_pb2.RefreshRequest(token=me.token), metadata=me.auth)
    assert fresh.player_id == me.player_id


async def test_bad_tokens_are_refused_on_the_event_stream(channel: grpc.aio.Channel) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    me, other = players
    table_id = await create_table(channel, players)
    stub = game_pb2_grpc.GameServiceStub(channel)
    failures = []
    for name, metadata, code, reason in bad_credentials(me.player_id, me.token, other.token):
        watch = stub.Watch(game_pb2.WatchRequest(table_id=table_id), metadata=metadata)
        got = await refused(watch.read())
        if got != (code, reason):
            failures.append((name, got))
    assert not failures, failures


async def test_a_watch_ends_at_the_first_event_after_its_token_expired(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    table_id = await create_table(channel, players, turn_timer_ms=3_600_000)
    by_seat = {p.seat: p for p in players}
    view = await players[0].view(table_id)
    mover = by_seat[view.current_seat]
    watcher = by_seat[1 - view.current_seat]
    short = issue_token(watcher.player_id, secret=SECRET, ttl_s=2, now=time.time())
    stub = game_pb2_grpc.GameServiceStub(channel)
    stream = stub.Watch(
        game_pb2.WatchRequest(table_id=table_id, after_seq=view.last_seq - 1),
        metadata=bearer(short),
        timeout=WAIT_S,
    )
    first = await stream.read()  # the stream is open while the token is good
    assert first.event.seq == view.last_seq
    # The stream is the watcher's presence at the table: the seats are told.
    told = await stream.read()
    assert (told.event.kind, told.event.seat) == (PLAYER_CONNECTION, watcher.seat)
    await asyncio.sleep(2.2)  # the token has expired; the stream is open and idle
    await mover.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
    assert await refused(stream.read()) == (UNAUTHENTICATED, "TOKEN_EXPIRED")

    # Signed in again, the watcher resumes where it was: the draw is the next event.
    resumed = stub.Watch(
        game_pb2.WatchRequest(table_id=table_id, after_seq=told.event.seq),
        metadata=watcher.auth,
        timeout=WAIT_S,
    )
    reply = await resumed.read()
    assert reply.event.seq == told.event.seq + 1
    assert reply.event.seat == mover.seat
    resumed.cancel()
