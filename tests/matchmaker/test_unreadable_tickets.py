"""A ticket whose stored options this build cannot read (stored before an update
changed what they may hold) ends, saying why, instead of failing every claim
that takes it: the other tickets are still seated."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker import endings

from .harness import backend, enqueue, get_ticket, host, join, players, store


@pytest.mark.parametrize(
    "options",
    [
        '{"turn_cap": "many"}',
        "[]",
        '{"contracts": [{"groups": 1}]}',
    ],
    ids=["a-word-for-a-number", "not-an-object", "a-contract-cut-short"],
)
async def test_unreadable_tickets_end_and_the_others_are_seated(
    fresh_dsn: str, options: str
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        alice, bob, carol, dan = await players(b.channel(), 4)
        # Carol and Dan wait for a table of their own, queued first.
        stale = [await enqueue(p, table_size=2, ruleset="rami51") for p in (carol, dan)]
        await db.con.execute(
            "UPDATE tickets SET options = $2::jsonb WHERE id = ANY($1::uuid[])",
            [uuid.UUID(w.ticket_id) for w in stale],
            options,
        )
        waiters = [await enqueue(p, table_size=2) for p in (alice, bob)]
        await b.add_replica(matching=True)
        await asyncio.gather(*(w.end() for w in waiters + stale))
        assert all(w.match is not None for w in waiters)
        for waiter in stale:
            assert waiter.final.state == mm.TICKET_STATE_EXPIRED
            assert waiter.final.end_message == endings.UNREADABLE
            assert await db.state(waiter.ticket_id) == "expired"
        # Its player can read it too, and queue again.
        told = await get_ticket(carol, stale[0].ticket_id)
        assert (told.state, told.end_message) == (mm.TICKET_STATE_EXPIRED, endings.UNREADABLE)
        again = await enqueue(carol, table_size=2)
        assert again.ticket.state == mm.TICKET_STATE_QUEUED


async def test_a_private_table_whose_hosts_ticket_is_unreadable_closes(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, guest = await players(b.channel(), 2)
        hosting = await host(owner, table_size=2)
        joined = await join(guest, hosting.ticket.invite_code)
        await db.con.execute(
            "UPDATE tickets SET options = '[]'::jsonb WHERE id = $1",
            uuid.UUID(hosting.ticket_id),
        )
        # The table is full, so a claim takes it: without its host, it cannot start.
        assert await b.matcher().claim() == []
        await asyncio.gather(hosting.end(), joined.end())
        assert hosting.final.state == mm.TICKET_STATE_EXPIRED
        assert hosting.final.end_message == endings.UNREADABLE
        assert joined.final.state == mm.TICKET_STATE_CANCELLED
        assert joined.final.end_message == endings.HOST_UNREADABLE
        assert await db.count("SELECT count(*) FROM tickets WHERE ended_at IS NULL") == 0
