"""The operators' view of the tables: listed by state and age, and one table's
log as a spectator was sent it."""

from __future__ import annotations

import uuid

import grpc
from google.protobuf.duration_pb2 import Duration
from structlog.testing import capture_logs

from services.common.pb.rummy.admin.v1 import admin_pb2
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import DrawStock, Leave
from tests.game.harness import create_table, login, refused, start_server

from .harness import OPERATOR, admin_lines, database, operator_auth, tables_admin

HOUR = Duration(seconds=3600)


async def test_tables_are_listed_by_state_and_age_the_longest_idle_first(fresh_dsn: str) -> None:
    server = await start_server(fresh_dsn)
    game = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        players = [await login(game, name) for name in ("Ana", "Bo", "Cy", "Di", "Ed", "Flo")]
        stuck = await create_table(game, players[0:2])
        fresh = await create_table(game, players[2:4])
        over = await create_table(game, players[4:6])
        await players[5].send(over, Leave())  # the last two: the game is over
        async with database(fresh_dsn) as con:
            await con.execute(
                "UPDATE tables SET created_at = now() - interval '3 hours',"
                " updated_at = now() - interval '2 hours' WHERE id = $1",
                uuid.UUID(stuck),
            )
        admin = tables_admin(game)

        async def listed(**request: object) -> tuple[list[str], bool]:
            reply = await admin.ListTables(
                admin_pb2.ListTablesRequest(**request), metadata=operator_auth()
            )
            return [t.table_id for t in reply.tables], reply.truncated

        with capture_logs() as logs:
            assert await listed() == ([stuck, fresh, over], False)
        assert await listed(state=admin_pb2.TABLE_STATE_ACTIVE) == ([stuck, fresh], False)
        assert await listed(state=admin_pb2.TABLE_STATE_FINISHED) == ([over], False)
        assert await listed(older_than=HOUR) == ([stuck], False)
        assert await listed(idle_for=HOUR, state=admin_pb2.TABLE_STATE_ACTIVE) == ([stuck], False)
        assert await listed(idle_for=Duration(seconds=3 * 3600)) == ([], False)
        assert await listed(limit=1) == ([stuck], True)
        (line,) = admin_lines(logs, "ListTables", operator=OPERATOR)
        assert line["outcome"] == "done" and line["tables"] == 3

        reply = await admin.ListTables(
            admin_pb2.ListTablesRequest(state=admin_pb2.TABLE_STATE_FINISHED),
            metadata=operator_auth(),
        )
        (table,) = reply.tables
        assert table.ruleset == "cafe" and table.state == admin_pb2.TABLE_STATE_FINISHED
        assert [(s.seat, s.display_name, s.left) for s in table.seats] == [
            (0, "Ed", False),
            (1, "Flo", True),
        ]
        assert table.seats[0].player_id == players[4].player_id
        assert table.HasField("finished_at") and not table.HasField("due_at")

        invalid = (grpc.StatusCode.INVALID_ARGUMENT, "FILTER_INVALID")
        for bad in (
            admin_pb2.ListTablesRequest(limit=501),
            admin_pb2.ListTablesRequest(older_than=Duration(seconds=-1)),
            admin_pb2.ListTablesRequest(idle_for=Duration(seconds=-1)),
            admin_pb2.ListTablesRequest(state=99),  # type: ignore[arg-type]
        ):
            assert await refused(admin.ListTables(bad, metadata=operator_auth())) == invalid
    finally:
        await game.close()
        await server.stop(0)


async def test_a_tables_log_reads_as_a_spectator_was_sent_it(fresh_dsn: str) -> None:
    server = await start_server(fresh_dsn)
    game = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        ana, bo = [await login(game, name) for name in ("Ana", "Bo")]
        table_id = await create_table(game, [ana, bo])
        view = await ana.view(table_id)
        mover = ana if view.current_seat == ana.seat else bo
        drawn = (await mover.send(table_id, DrawStock())).card
        admin = tables_admin(game)

        with capture_logs() as logs:
            reply = await admin.GetTableLog(
                admin_pb2.GetTableLogRequest(table_id=table_id), metadata=operator_auth()
            )
        assert [s.display_name for s in reply.view.seats] == ["Ana", "Bo"]
        assert not reply.view.HasField("my_seat") and not reply.view.hand, "a spectator's view"
        assert reply.table.table_id == table_id and reply.table.last_seq == reply.view.last_seq
        kinds = [e.WhichOneof("payload") for e in reply.events]
        assert kinds[0] == "dealt" and kinds[-1] == "drew"
        assert [e.seq for e in reply.events] == list(range(1, reply.view.last_seq + 1))
        dealt, drew = reply.events[0].dealt, reply.events[-1]
        assert not dealt.hand, "no seat's hand is shown"
        assert drew.seat == mover.seat and not drew.drew.HasField("card"), drawn
        (line,) = admin_lines(logs, "GetTableLog", operator=OPERATOR, table_id=table_id)
        assert line["events"] == len(reply.events)

        later = await admin.GetTableLog(
            admin_pb2.GetTableLogRequest(table_id=table_id, after_seq=1, limit=1),
            metadata=operator_auth(),
        )
        assert [e.seq for e in later.events] == [2]

        async def log_of(**request: object) -> tuple[grpc.StatusCode, str | None]:
            call = admin.GetTableLog(
                admin_pb2.GetTableLogRequest(**request), metadata=operator_auth()
            )
            return await refused(call)

        assert await log_of(table_id=str(uuid.uuid4())) == (
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
        )
        assert await log_of(table_id="nope") == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "TABLE_ID_INVALID",
        )
        assert await log_of(table_id=table_id, limit=1001) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "FILTER_INVALID",
        )
        assert drew.kind == table_pb2.EVENT_KIND_DREW
    finally:
        await game.close()
        await server.stop(0)
