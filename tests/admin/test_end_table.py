"""An operator ends a stuck table: every watcher is told, with the operator's
words; the game is over for good, nobody's rating moves, and its players are
free to play again."""

from __future__ import annotations

import uuid

import grpc
from structlog.testing import capture_logs

from services.common.pb.rummy.admin.v1 import admin_pb2
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.rating import DEFAULT_RATING
from services.game.rules.actions import DrawStock, Leave
from tests.game.harness import LONG_TURNS_MS, create_table, login, refused
from tests.matchmaker.harness import backend, enqueue, on

from .harness import OPERATOR, admin_lines, database, operator_auth, tables_admin

REASON = "The table stopped answering after an upgrade: sorry, play again!"


async def test_ending_a_stuck_table_tells_its_watchers_and_leaves_nothing_half_done(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn) as b:
        game = grpc.aio.insecure_channel(b.game_target)
        try:
            players = [await login(game, name) for name in ("Ana", "Bo", "Cy")]
            table_id = await create_table(game, players, turn_timer_ms=LONG_TURNS_MS)
            # Cy leaves: the other two play on. Were the game rated, Cy would be placed
            # last and every rating would move.
            await players[2].send(table_id, Leave())
            view = await players[0].view(table_id)
            watchers = [p.watch(table_id, after=view.last_seq) for p in players[:2]]
            async with database(fresh_dsn) as con:
                # Stuck: nothing has moved for two hours, and nothing is due for a day.
                await con.execute(
                    "UPDATE tables SET updated_at = now() - interval '2 hours',"
                    " turn_deadline = now() + interval '1 day' WHERE id = $1",
                    uuid.UUID(table_id),
                )
                version = await con.fetchval(
                    "SELECT version FROM tables WHERE id = $1", uuid.UUID(table_id)
                )

                with capture_logs() as logs:
                    ended = await tables_admin(game).EndTable(
                        admin_pb2.EndTableRequest(table_id=table_id, reason=f"  {REASON} "),
                        metadata=operator_auth(),
                    )

                for watcher in watchers:
                    events = await watcher.to_end()
                    last = events[-1]
                    assert last.WhichOneof("payload") == "game_ended"
                    assert last.seq == ended.ended_seq
                    assert last.game_ended.reason == table_pb2.END_REASON_ENDED_BY_OPERATOR
                    assert last.game_ended.note == REASON
                    assert not last.game_ended.HasField("winner_seat"), "nobody won"
                assert ended.table.state == admin_pb2.TABLE_STATE_FINISHED
                assert ended.table.HasField("finished_at") and not ended.table.HasField("due_at")

                row = await con.fetchrow(
                    "SELECT status, finished_at, turn_deadline, version, last_seq FROM tables"
                    " WHERE id = $1",
                    uuid.UUID(table_id),
                )
                assert row["status"] == "finished" and row["finished_at"] is not None
                assert row["turn_deadline"] is None, "the sweeper has nothing left to fire"
                assert (row["version"], row["last_seq"]) == (version + 1, ended.ended_seq)
                standings = await con.fetch(
                    "SELECT rating, rated_games, games FROM player_standings"
                    " WHERE player_id = ANY($1::text[])",
                    [p.player_id for p in players],
                )
                assert [tuple(r) for r in standings] == [(DEFAULT_RATING, 0, 1)] * 3

            after = await players[1].view(table_id)
            assert after.phase == table_pb2.PHASE_GAME_OVER
            assert after.result.reason == table_pb2.END_REASON_ENDED_BY_OPERATOR
            assert after.result.note == REASON
            seat = after.current_seat
            mover = next(p for p in players if p.seat == seat)
            assert await refused(mover.send(table_id, DrawStock())) == (
                grpc.StatusCode.FAILED_PRECONDITION,
                "GAME_OVER",
            )
            # Free to play again: no seat is kept at an ended table.
            waiter = await enqueue(on(players[0], b.channel()), table_size=2)
            waiter.drop()

            again = tables_admin(game).EndTable(
                admin_pb2.EndTableRequest(table_id=table_id, reason="twice"),
                metadata=operator_auth(),
            )
            assert await refused(again) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")
        finally:
            await game.close()
    (line,) = admin_lines(logs, "EndTable", outcome="done")
    assert line["operator"] == OPERATOR and line["table_id"] == table_id
    assert line["ended_seq"] == ended.ended_seq


async def test_ending_a_table_needs_a_table_and_a_reason(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        game = grpc.aio.insecure_channel(b.game_target)
        try:
            players = [await login(game, name) for name in ("Ana", "Bo")]
            table_id = await create_table(game, players)
            admin = tables_admin(game)

            async def end(table: str, reason: str) -> tuple[grpc.StatusCode, str | None]:
                request = admin_pb2.EndTableRequest(table_id=table, reason=reason)
                return await refused(admin.EndTable(request, metadata=operator_auth()))

            invalid = grpc.StatusCode.INVALID_ARGUMENT
            with capture_logs() as logs:
                assert await end(table_id, "") == (invalid, "ADMIN_REASON_INVALID")
                assert await end(table_id, "   ") == (invalid, "ADMIN_REASON_INVALID")
                assert await end(table_id, "x" * 201) == (invalid, "ADMIN_REASON_INVALID")
                assert await end(table_id, "two\nlines") == (invalid, "ADMIN_REASON_INVALID")
                assert await end("nope", "why") == (invalid, "TABLE_ID_INVALID")
                assert await end(str(uuid.uuid4()), "why") == (
                    grpc.StatusCode.NOT_FOUND,
                    "TABLE_NOT_FOUND",
                )
            # Each refused use is logged too, with who tried and why it was refused.
            assert len(admin_lines(logs, "EndTable", operator=OPERATOR)) == 6
            assert admin_lines(logs, "EndTable", outcome="TABLE_NOT_FOUND")
            view = await players[0].view(table_id)
            assert view.phase != table_pb2.PHASE_GAME_OVER, "no refused call ended the game"
            reply = await players[0].game.GetTable(
                game_pb2.GetTableRequest(table_id=table_id), metadata=players[0].auth
            )
            assert not reply.view.HasField("result")
        finally:
            await game.close()
