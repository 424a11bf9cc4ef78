"""A replica stopping (a rolling deploy): the streams it closes at the end of its
grace period cancel their tickets before its pool closes, so that no ticket is
left queued with nobody to play it, to be seated at a table nobody was told of."""

from __future__ import annotations

import contextlib

import grpc

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker import endings

from .harness import backend, enqueue, get_ticket, host, join, on, players, store


async def test_a_stopping_replica_cancels_the_tickets_of_the_streams_it_closes(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, replicas=2, matching=False) as b, store(fresh_dsn) as db:
        alice, owner, ann, bob = await players(b.channel(0), 4)
        waiting = await enqueue(alice, table_size=2)
        hosting = await host(owner, table_size=3)
        # A friend follows the private table on the replica that stays.
        guest = await join(on(ann, b.channel(1)), hosting.ticket.invite_code)
        await b.matchmakers[0].stop(0.5)
        assert await db.state(waiting.ticket_id) == "cancelled"
        assert await db.state(hosting.ticket_id) == "cancelled"
        assert await db.state(guest.ticket_id) == "cancelled"
        # The players' streams were cut; asked elsewhere, each ticket says why it ended.
        for player, cut, why in (
            (alice, waiting, endings.LEFT),
            (owner, hosting, endings.HOST_LEFT),
        ):
            with contextlib.suppress(grpc.aio.AioRpcError):
                while await cut.next() is not None:
                    pass
            ticket = await get_ticket(on(player, b.channel(1)), cut.ticket_id)
            assert ticket.state == mm.TICKET_STATE_CANCELLED
            assert ticket.end_message == why
        await guest.end()
        assert guest.final.end_message == endings.HOST_LEFT
        # Nobody is seated with a player who has gone.
        await enqueue(on(bob, b.channel(1)), table_size=2)
        assert await b.matcher(1).match_once() == 0
