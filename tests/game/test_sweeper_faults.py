"""The turn-timeout sweeper outlives what goes wrong: an unexpected error is
logged and the sweep goes on, a table whose turn cannot be fired is put off
(and logged with its id) without holding up any other table's timeout, and the
server still stops cleanly afterwards."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import asyncpg
import grpc
import pytest
from structlog.testing import capture_logs

from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.game import sweeper
from services.game.server import GameServer

from .harness import (
    LONG_TURNS_MS,
    WAIT_S,
    address,
    create_request,
    create_table,
    kind_is,
    login,
    service_auth,
    start_server,
)

TIMED_OUT = table_pb2.TURN_PASSED_REASON_TIMED_OUT
SHORT_TURNS_MS = 300


async def a_turn_times_out(channel: grpc.aio.Channel) -> None:
    """A fresh table's first turn passes by the clock."""
    players = [await login(channel, f"T{i}") for i in range(2)]
    table_id = await create_table(channel, players, turn_timer_ms=SHORT_TURNS_MS)
    watcher = players[1].watch(table_id)
    try:
        passed = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_PASSED))
    finally:
        watcher.cancel()
    assert (passed.seat, passed.turn_passed.reason) == (0, TIMED_OUT)


async def test_a_table_that_cannot_be_fired_is_put_off_and_holds_up_no_other(
    server: GameServer, channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"B{i}") for i in range(2)]
    broken = await create_table(channel, players, turn_timer_ms=LONG_TURNS_MS)
    con = await asyncpg.connect(fresh_dsn)
    try:
        # A state no replica can read, due long before any other turn: the first
        # row every sweep claims.
        with capture_logs() as logs:  # from before the sweep can see it
            await con.execute(
                "UPDATE tables SET state = 'not a state'::bytea,"
                " turn_deadline = now() - interval '1 hour' WHERE id = $1",
                uuid.UUID(broken),
            )
            await a_turn_times_out(channel)
        row = await con.fetchrow(
            "SELECT version, status, turn_deadline > now() AS put_off FROM tables WHERE id = $1",
            uuid.UUID(broken),
        )
    finally:
        await con.close()
    assert (row["version"], row["status"], row["put_off"]) == (1, "active", True)
    failed = [e for e in logs if e["event"] == "sweep_table_failed"]
    assert failed and {e["table_id"] for e in failed} == {broken}
    assert all(e["log_level"] == "error" for e in failed)


async def test_a_table_whose_write_the_database_refuses_is_put_off_too(
    server: GameServer, channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """An error PostgreSQL raises for one table's rows (a trigger here; a damaged
    value, a limit...) is that table's, not an outage: it is put off, and every
    other table's timeouts go on."""
    players = [await login(channel, f"W{i}") for i in range(2)]
    broken = str(uuid.uuid4())
    con = await asyncpg.connect(fresh_dsn)
    try:
        await con.execute(
            "CREATE FUNCTION refuse_moves() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN IF NEW.table_id = '{broken}' AND NEW.version > 1"
            " THEN RAISE EXCEPTION 'no'; END IF; RETURN NEW; END $$;"
            " CREATE TRIGGER refuse_moves BEFORE INSERT ON table_events"
            " FOR EACH ROW EXECUTE FUNCTION refuse_moves()"
        )
        with capture_logs() as logs:
            request = create_request(players, turn_timer_ms=SHORT_TURNS_MS)
            request.table_id = broken
            stub = tables_pb2_grpc.TableServiceStub(channel)
            await stub.CreateTable(request, metadata=service_auth())
            await a_turn_times_out(channel)
            async with asyncio.timeout(WAIT_S):  # its turn failed, and was put off
                while not any(e["event"] == "sweep_table_failed" for e in logs) or not (
                    await con.fetchval(
                        "SELECT turn_deadline > now() FROM tables WHERE id = $1",
                        uuid.UUID(broken),
                    )
                ):
                    await asyncio.sleep(0.05)
        version = await con.fetchval("SELECT version FROM tables WHERE id = $1", uuid.UUID(broken))
    finally:
        await con.close()
    assert version == 1, "nothing of the refused move was kept"
    failed = [e for e in logs if e["event"] == "sweep_table_failed"]
    assert {e["table_id"] for e in failed} == {broken}


@dataclass
class OwnServer:
    """A server of the test's own, which the test stops itself (the fixture
    stops it when the test did not get that far)."""

    server: GameServer
    stopped: bool = False

    async def stop(self) -> None:
        self.stopped = True
        await self.server.stop(0)


@pytest.fixture
async def own_server(fresh_dsn: str) -> AsyncIterator[OwnServer]:
    own = OwnServer(await start_server(fresh_dsn))
    try:
        yield own
    finally:
        if not own.stopped:
            await own.server.stop(0)


async def test_the_sweeper_survives_an_unexpected_error_and_the_server_still_stops(
    own_server: OwnServer,
) -> None:
    assert own_server.server.tables is not None
    tables = own_server.server.tables.sweeper
    due: Callable[[int], Awaitable[int]] = tables.due
    failures = 0

    async def failing_due(most: int) -> int:
        nonlocal failures
        if failures < 3:
            failures += 1
            raise RuntimeError("a fault no one planned for")
        return await due(most)

    tables.due = failing_due  # type: ignore[method-assign]
    with capture_logs() as logs:
        async with grpc.aio.insecure_channel(address(own_server.server)) as channel:
            await a_turn_times_out(channel)
    assert failures == 3
    assert any(e["event"] == "sweep_crashed" for e in logs)
    await own_server.stop()  # completes, raising nothing


async def test_a_bot_that_fails_leaves_its_turn_to_the_clock_and_the_table_goes_on(
    channel: grpc.aio.Channel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fault in the bot (not a refused move) is logged, and the bot's turn then
    passes at its timer as an absent player's would: the table is never stuck."""

    def failing_bot(*_args: object) -> object:
        raise RuntimeError("the bot tripped")

    monkeypatch.setattr(sweeper, "bot_turn", failing_bot)
    human = await login(channel, "Human")
    created = await tables_pb2_grpc.TableServiceStub(channel).CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="cafe",
            options=table_pb2.TableOptions(turn_timer_ms=SHORT_TURNS_MS),
            players=[
                tables_pb2.SeatedPlayer(player_id=human.player_id, display_name="Human"),
                tables_pb2.SeatedPlayer(player_id="bot-1", display_name="Bot", is_bot=True),
            ],
        ),
        metadata=service_auth(),
    )
    table_id = created.table_id
    watcher = human.watch(table_id)
    try:
        with capture_logs() as logs:
            first = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_PASSED))
            second = await watcher.until(kind_is(table_pb2.EVENT_KIND_TURN_PASSED))
    finally:
        watcher.cancel()
    assert (first.seat, second.seat) == (0, 1), "the human's turn, then the bot's, by the clock"
    assert second.turn_passed.reason == TIMED_OUT
    failed = [e for e in logs if e["event"] == "bot_turn_failed"]
    assert failed and {e["table_id"] for e in failed} == {table_id}
    assert not [e for e in logs if e["event"] == "sweep_table_failed"]
