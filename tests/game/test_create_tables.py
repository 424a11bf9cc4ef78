"""CreateTables: many tables in one call, each made exactly as CreateTable would
make it; a refused table leaves the others made; retried ids answer the same."""

from __future__ import annotations

import uuid

import asyncpg
import grpc

from services.common.auth_servicer import MAX_NAME
from services.common.decoding import MAX_REQUEST_BYTES
from services.common.errors import INTERNAL_MESSAGE, error_info
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.game.internal_servicer import TABLES_PER_CALL
from services.game.request_parsing import MAX_PLAYER_ID, MAX_REQUEST_ID

from .harness import create_request, login, refused, service_auth
from .stored import table_db
from .test_create_table import with_


async def test_a_batch_makes_its_tables_and_refuses_only_the_bad_one(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"B{i}") for i in range(4)]
    good = [with_(create_request(players[i : i + 2]), table_id=str(uuid.uuid4())) for i in (0, 2)]
    bad = with_(create_request(players[:2]), table_id=str(uuid.uuid4()), ruleset="poker")
    stub = tables_pb2_grpc.TableServiceStub(channel)
    batch = tables_pb2.CreateTablesRequest(tables=[good[0], bad, good[1]])
    reply = await stub.CreateTables(batch, metadata=service_auth())

    made, refusal, made_too = reply.results
    assert (made.table.table_id, made.table.version) == (good[0].table_id, 1)
    assert (made_too.table.table_id, made_too.table.version) == (good[1].table_id, 1)
    assert not refusal.HasField("table")
    assert (refusal.refused.code, refusal.refused.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT.value[0],
        "RULESET_UNKNOWN",
    )
    assert "poker" in refusal.refused.message
    async with table_db(fresh_dsn) as db:
        assert await db.count_tables() == 2
        for request in good:
            _, state = await db.state(request.table_id)
            assert state.seats == 2 and state.ruleset.name == "cafe"

    # The same batch again (a retry): the same answers, nothing made twice.
    again = await stub.CreateTables(batch, metadata=service_auth())
    assert again == reply
    async with table_db(fresh_dsn) as db:
        assert await db.count_tables() == 2


async def test_a_fault_in_one_table_answers_internal_for_it_alone(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """A table whose making fails in a way nothing expects (a database trigger
    raising, here) gets INTERNAL; the batch's other tables are made and answered."""
    players = [await login(channel, f"F{i}") for i in range(4)]
    good, faulty = (
        with_(create_request(players[i : i + 2]), table_id=str(uuid.uuid4())) for i in (0, 2)
    )
    con = await asyncpg.connect(fresh_dsn)
    try:
        await con.execute(
            "CREATE FUNCTION refuse_one() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN IF NEW.id = '{faulty.table_id}' THEN RAISE EXCEPTION 'no'; END IF;"
            " RETURN NEW; END $$;"
            " CREATE TRIGGER refuse_one BEFORE INSERT ON tables"
            " FOR EACH ROW EXECUTE FUNCTION refuse_one()"
        )
    finally:
        await con.close()
    stub = tables_pb2_grpc.TableServiceStub(channel)
    batch = tables_pb2.CreateTablesRequest(tables=[faulty, good])
    failed, made = (await stub.CreateTables(batch, metadata=service_auth())).results

    assert made.table.table_id == good.table_id
    assert (failed.refused.code, failed.refused.reason) == (
        grpc.StatusCode.INTERNAL.value[0],
        "INTERNAL",
    )
    assert failed.refused.message == INTERNAL_MESSAGE  # not the database's own words
    async with table_db(fresh_dsn) as db:
        assert await db.count_tables() == 1


async def test_a_batch_needs_the_service_credential_and_1_to_32_tables(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, f"C{i}") for i in range(2)]
    stub = tables_pb2_grpc.TableServiceStub(channel)
    one = tables_pb2.CreateTablesRequest(tables=[create_request(players)])
    as_player = stub.CreateTables(one, metadata=(("authorization", f"Bearer {players[0].token}"),))
    assert await refused(as_player) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "SERVICE_CREDENTIAL_REQUIRED",
    )
    for count in (0, TABLES_PER_CALL + 1):
        many = tables_pb2.CreateTablesRequest(tables=[create_request(players)] * count)
        try:
            await stub.CreateTables(many, metadata=service_auth())
        except grpc.aio.AioRpcError as error:
            info = error_info(error)
            assert (error.code(), info.reason if info else None) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "TABLES_PER_CALL",
            )
            assert f"1 to {TABLES_PER_CALL}" in (error.details() or "")
        else:
            raise AssertionError(f"{count} tables in one call were accepted")


def test_the_largest_batch_fits_a_request() -> None:
    """32 four-seat tables, every field at its longest (ids, names of 4-byte
    characters, a request id, a test deck of two packs): under the size limit."""
    seat = tables_pb2.SeatedPlayer(
        player_id="p" * MAX_PLAYER_ID, display_name="\U0001f0a1" * MAX_NAME
    )
    table = tables_pb2.CreateTableRequest(
        table_id=str(uuid.uuid4()),
        request_id="r" * MAX_REQUEST_ID,
        ruleset="contract",
        options=table_pb2.TableOptions(
            turn_timer_ms=3_600_000,
            turn_cap=1_000,
            contracts=[table_pb2.Contract(groups=2, runs=2, no_final_discard=True)] * 10,
        ),
        players=[seat] * 4,
        deck_order=range(110),
    )
    batch = tables_pb2.CreateTablesRequest(tables=[table] * TABLES_PER_CALL)
    assert batch.ByteSize() < MAX_REQUEST_BYTES
