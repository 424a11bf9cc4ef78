"""CreateTable input: malformed tables are refused with a reason and leave no
row behind; an explicit deck order needs a server started for tests."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from services.common.errors import error_info
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import DrawStock

from .harness import address, create_request, deck_order, login, refused, service_auth, start_server
from .stored import table_db

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def with_(request: tables_pb2.CreateTableRequest, **changes: Any) -> tables_pb2.CreateTableRequest:
    changed = tables_pb2.CreateTableRequest()
    changed.CopyFrom(request)
    for name, value in changes.items():
        changed.ClearField(name)
        if isinstance(value, list):
            getattr(changed, name).extend(value)
        elif name == "options":
            changed.options.CopyFrom(value)
        else:
            setattr(changed, name, value)
    return changed


async def test_malformed_tables_are_refused(
    channel: grpc.aio.Channel, fresh_dsn: str, subtests: Any
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    good = create_request(players)
    seat = good.players[0]
    deck = deck_order(2)
    cases = [
        ("one player", with_(good, players=[seat]), "SEATS_INVALID"),
        ("five players", with_(good, players=[*good.players] * 2 + [seat]), "SEATS_INVALID"),
        ("one player twice", with_(good, players=[seat, seat]), "SEATS_INVALID"),
        (
            "a seat without a player id",
            with_(good, players=[seat, tables_pb2.SeatedPlayer()]),
            "PLAYER_ID_INVALID",
        ),
        (
            "a name with a NUL",
            with_(
                good, players=[seat, tables_pb2.SeatedPlayer(player_id="p2", display_name="a\x00")]
            ),
            "PLAYER_ID_INVALID",
        ),
        (
            "a name longer than a player may choose",
            with_(
                good, players=[seat, tables_pb2.SeatedPlayer(player_id="p2", display_name="n" * 33)]
            ),
            "PLAYER_NAME_INVALID",
        ),
        ("unknown rule set", with_(good, ruleset="poker"), "RULESET_UNKNOWN"),
        (
            "turn timer below 100 ms",
            with_(good, options=table_pb2.TableOptions(turn_timer_ms=50)),
            "OPTIONS_INVALID",
        ),
        ("bad table id", with_(good, table_id="table-1"), "TABLE_ID_INVALID"),
        ("deck with a card twice", with_(good, deck_order=[*deck[:-1], deck[0]]), "DECK_INVALID"),
        ("deck missing a card", with_(good, deck_order=deck[:-1]), "DECK_INVALID"),
        ("deck with a foreign card", with_(good, deck_order=[*deck[:-1], 500]), "DECK_INVALID"),
    ]
    stub = tables_pb2_grpc.TableServiceStub(channel)
    async with table_db(fresh_dsn) as db:
        for name, request, reason in cases:
            with subtests.test(msg=name):
                call = stub.CreateTable(request, metadata=service_auth())
                assert await refused(call) == (INVALID, reason)
                assert await db.count_tables() == 0


async def test_a_retried_create_with_its_own_id_makes_one_table(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    table_id = str(uuid.uuid4())
    request = with_(create_request(players), table_id=table_id)
    stub = tables_pb2_grpc.TableServiceStub(channel)
    first = await stub.CreateTable(request, metadata=service_auth())
    again = await stub.CreateTable(request, metadata=service_auth())
    assert first == again and first.table_id == table_id
    others = [await login(channel, f"Q{i}") for i in range(2)]
    clash = with_(create_request(others), table_id=table_id)
    assert await refused(stub.CreateTable(clash, metadata=service_auth())) == (
        grpc.StatusCode.ALREADY_EXISTS,
        "TABLE_EXISTS",
    )
    async with table_db(fresh_dsn) as db:
        assert await db.count_tables() == 1


@pytest.mark.parametrize("key", ["request_id", "table_id"])
async def test_a_retried_create_makes_one_table_and_answers_as_the_first_time(
    channel: grpc.aio.Channel, fresh_dsn: str, key: str
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    request = with_(create_request(players, deck_order=deck_order(2)), **{key: str(uuid.uuid4())})
    stub = tables_pb2_grpc.TableServiceStub(channel)
    first = await stub.CreateTable(request, metadata=service_auth())
    assert first.version == 1
    again = await stub.CreateTable(request, metadata=service_auth())
    assert again == first
    # The table moves on; a late retry still gets the first answer, and changes nothing.
    for i, p in enumerate(players):
        p.seat = i
    await players[0].send(first.table_id, DrawStock())
    moved = await players[0].view(first.table_id)
    late = await stub.CreateTable(request, metadata=service_auth())
    assert late == first
    now = await players[0].view(first.table_id)
    assert (now.version, now.last_seq) == (moved.version, moved.last_seq) == (2, 3)
    # Another key is another table.
    other = await stub.CreateTable(
        with_(request, **{key: str(uuid.uuid4())}), metadata=service_auth()
    )
    assert other.table_id != first.table_id
    async with table_db(fresh_dsn) as db:
        assert await db.count_tables() == 2
        assert len(await db.log(first.table_id)) == 2 + 1  # the deal, its first turn, a draw


@pytest.mark.parametrize("key", ["request_id", "table_id"])
async def test_a_retry_asking_for_another_table_is_refused(
    channel: grpc.aio.Channel, fresh_dsn: str, subtests: Any, key: str
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    seats = list(create_request(players).players)
    renamed = tables_pb2.SeatedPlayer(player_id=seats[1].player_id, display_name="Someone else")
    stub = tables_pb2_grpc.TableServiceStub(channel)
    request = with_(create_request(players), **{key: str(uuid.uuid4())})
    first = await stub.CreateTable(request, metadata=service_auth())
    clashes = [
        ("another rule set", with_(request, ruleset="rami51")),
        ("other options", with_(request, options=table_pb2.TableOptions(turn_cap=30))),
        ("other players", with_(request, players=[seats[1], seats[0]])),
        ("another name", with_(request, players=[seats[0], renamed])),
        ("a bot", with_(request, players=[seats[0], with_bot(seats[1])])),
    ]
    async with table_db(fresh_dsn) as db:
        for name, clash in clashes:
            with subtests.test(msg=name):
                assert await refused(stub.CreateTable(clash, metadata=service_auth())) == (
                    grpc.StatusCode.ALREADY_EXISTS,
                    "TABLE_EXISTS",
                )
                assert await db.count_tables() == 1
                assert len(await db.log(first.table_id)) == 2
    # The same request is still answered as the first time.
    assert await stub.CreateTable(request, metadata=service_auth()) == first


async def test_a_malformed_create_request_id_is_refused(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"P{i}") for i in range(2)]
    stub = tables_pb2_grpc.TableServiceStub(channel)
    for request_id in ("r" * 65, "r\x00"):
        request = with_(create_request(players), request_id=request_id)
        assert await refused(stub.CreateTable(request, metadata=service_auth())) == (
            INVALID,
            "REQUEST_ID_INVALID",
        )
    async with table_db(fresh_dsn) as db:
        assert await db.count_tables() == 0


def with_bot(seat: tables_pb2.SeatedPlayer) -> tables_pb2.SeatedPlayer:
    return tables_pb2.SeatedPlayer(
        player_id=seat.player_id, display_name=seat.display_name, is_bot=True
    )


@pytest.fixture
async def production_channel(fresh_dsn: str) -> AsyncIterator[grpc.aio.Channel]:
    server = await start_server(fresh_dsn, allow_test_decks=False)
    try:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            yield channel
    finally:
        await server.stop(0)


async def test_a_server_not_started_for_tests_refuses_a_deck_order(
    production_channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(production_channel, f"P{i}") for i in range(2)]
    stub = tables_pb2_grpc.TableServiceStub(production_channel)
    scripted = create_request(players, deck_order=deck_order(2))
    async with table_db(fresh_dsn) as db:
        assert await refused(stub.CreateTable(scripted, metadata=service_auth())) == (
            grpc.StatusCode.PERMISSION_DENIED,
            "TEST_DECK_REFUSED",
        )
        assert await db.count_tables() == 0
        # The same table with a shuffled deck is fine.
        await stub.CreateTable(create_request(players), metadata=service_auth())
        assert await db.count_tables() == 1


async def test_concurrent_creates_of_one_table_make_one_table(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    players = [await login(channels[0], f"P{i}") for i in range(2)]
    table_id = str(uuid.uuid4())
    request = with_(create_request(players), table_id=table_id)
    stubs = [tables_pb2_grpc.TableServiceStub(c) for c in channels]
    calls = [stubs[i % 2].CreateTable(request, metadata=service_auth()) for i in range(6)]
    results = await asyncio.gather(*calls, return_exceptions=True)
    for r in results:
        if isinstance(r, grpc.aio.AioRpcError):
            # Lost the race to insert: told to retry, which then answers like the others.
            info = error_info(r)
            assert (r.code(), info.reason if info else None) == (
                grpc.StatusCode.ABORTED,
                "CONFLICT",
            )
        else:
            assert isinstance(r, tables_pb2.CreateTableResponse), r
            assert (r.table_id, r.version) == (table_id, 1)
    again = await stubs[0].CreateTable(request, metadata=service_auth())
    assert (again.table_id, again.version) == (table_id, 1)
    async with table_db(fresh_dsn) as db:
        assert await db.count_tables() == 1
        assert len(await db.log(table_id)) == 2  # one deal, one first turn
