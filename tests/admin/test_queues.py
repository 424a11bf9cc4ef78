"""The operators' view of the queues and their waits, and a player's tickets
taken off them: the player's waiting stream ends saying why."""

from __future__ import annotations

import grpc
from structlog.testing import capture_logs

from services.common.pb.rummy.admin.v1 import admin_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from tests.matchmaker.harness import backend, enqueue, host, join, players, refusal

from .harness import OPERATOR, admin_lines, database, operator_auth, queues_admin


async def test_the_queues_say_who_waits_and_how_long(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b:
        ana, bo, cy, di, ed, flo = await players(b.channel(), 6)
        alone = await enqueue(ana, table_size=2)
        three = await enqueue(bo, table_size=3, mode=mm.MATCH_MODE_RATING)
        hosting = await host(cy, table_size=3, ruleset="classic")
        guest = await join(di, hosting.ticket.invite_code)
        pair = [await enqueue(p, table_size=2, ruleset="rami51") for p in (ed, flo)]
        assert await b.matcher().match_once() == 2  # tickets seated
        async with database(fresh_dsn) as con:
            await con.execute(
                "UPDATE tickets SET created_at = now() - interval '90 seconds' WHERE id = $1::uuid",
                alone.ticket_id,
            )

        with capture_logs() as logs:
            reply = await queues_admin(b.channel()).ListQueues(
                admin_pb2.ListQueuesRequest(tickets_per_queue=5), metadata=operator_auth()
            )
        queues = {q.queue: q for q in reply.queues}
        assert list(queues) == ["3p-classic-private", "2p-cafe", "3p-cafe", "2p-rami51"]

        cafe = queues["2p-cafe"]
        assert (cafe.waiting, cafe.matching, cafe.private) == (1, 0, False)
        assert cafe.mode == mm.MATCH_MODE_FIFO and cafe.options.turn_timer_ms > 0
        assert cafe.longest_wait.seconds >= 90
        (ticket,) = cafe.tickets
        assert (ticket.ticket_id, ticket.player_id) == (alone.ticket_id, ana.player_id)
        assert ticket.waited.seconds >= 90 and not ticket.matching
        assert queues["3p-cafe"].mode == mm.MATCH_MODE_RATING

        private = queues["3p-classic-private"]
        assert (private.waiting, private.private, private.mode) == (2, True, 0)
        assert not private.HasField("options"), "each private table has its own"
        assert [(t.player_id, t.host) for t in private.tickets] == [
            (cy.player_id, True),
            (di.player_id, False),
        ]
        assert {t.invite_code for t in private.tickets} == {hosting.ticket.invite_code}

        matched = queues["2p-rami51"]
        assert (matched.waiting, matched.matched_last_hour) == (0, 2)
        assert not matched.tickets
        (line,) = admin_lines(logs, "ListQueues", operator=OPERATOR)
        assert line["queues"] == 4 and line["outcome"] == "done"

        fewer = await queues_admin(b.channel()).ListQueues(
            admin_pb2.ListQueuesRequest(tickets_per_queue=1), metadata=operator_auth()
        )
        assert [len(q.tickets) for q in fewer.queues] == [1, 1, 1, 0]
        code, info = await refusal(
            queues_admin(b.channel()).ListQueues(
                admin_pb2.ListQueuesRequest(tickets_per_queue=101), metadata=operator_auth()
            )
        )
        assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "FILTER_INVALID")
        for waiter in (alone, three, hosting, guest, *pair):
            waiter.drop()


async def test_removing_a_players_tickets_ends_their_wait_saying_why(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b:
        ana, bo, cy, di = await players(b.channel(), 4)
        alone = await enqueue(ana, table_size=2)
        seated = await enqueue(bo, table_size=3)
        hosting = await host(cy, table_size=3)
        guest = await join(di, hosting.ticket.invite_code)
        admin = queues_admin(b.channel())

        async def remove(player_id: str, reason: str = "") -> admin_pb2.RemoveTicketsResponse:
            request = admin_pb2.RemoveTicketsRequest(player_id=player_id, reason=reason)
            reply: admin_pb2.RemoveTicketsResponse = await admin.RemoveTickets(
                request, metadata=operator_auth()
            )
            return reply

        with capture_logs() as logs:
            done = await remove(ana.player_id, "Queue reset for maintenance")
        assert list(done.removed) == [alone.ticket_id] and not done.still_matching
        await alone.end()
        assert alone.final.state == mm.TICKET_STATE_CANCELLED
        assert alone.final.end_message == (
            "The people who run the game took you off the queue: Queue reset for maintenance"
        )
        (line,) = admin_lines(logs, "RemoveTickets", operator=OPERATOR, player_id=ana.player_id)
        assert line["removed"] == [alone.ticket_id] and line["outcome"] == "done"

        # The host's ticket closes the private table for its guests too.
        assert list((await remove(cy.player_id)).removed) == [hosting.ticket_id]
        for waiter in (hosting, guest):
            await waiter.end()
            assert waiter.final.state == mm.TICKET_STATE_CANCELLED
            assert waiter.final.end_message == (
                "The people who run the game closed this private table."
            )

        # A ticket whose table is being set up is left to it, its wish to leave kept.
        async with database(fresh_dsn) as con:
            await con.execute(
                "UPDATE tickets SET state = 'matching' WHERE id = $1::uuid", seated.ticket_id
            )
            done = await remove(bo.player_id)
            assert list(done.still_matching) == [seated.ticket_id] and not done.removed
            assert await con.fetchval(
                "SELECT leave_requested FROM tickets WHERE id = $1::uuid", seated.ticket_id
            )
        seated.drop()

        with capture_logs() as logs:
            for player_id, reason, wanted in (
                (ana.player_id, "", (grpc.StatusCode.NOT_FOUND, "TICKET_NOT_FOUND")),
                ("", "", (grpc.StatusCode.INVALID_ARGUMENT, "PLAYER_ID_INVALID")),
                (
                    di.player_id,
                    "x" * 201,
                    (grpc.StatusCode.INVALID_ARGUMENT, "ADMIN_REASON_INVALID"),
                ),
            ):
                code, info = await refusal(remove(player_id, reason))
                assert (code, info.reason) == wanted
        outcomes = [line["outcome"] for line in admin_lines(logs, "RemoveTickets")]
        assert outcomes == ["TICKET_NOT_FOUND", "PLAYER_ID_INVALID", "ADMIN_REASON_INVALID"]
