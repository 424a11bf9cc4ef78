"""Private tables racing the matching loop: a table starts with every friend who
joined it, a host leaving as it is claimed is told it is too late, and a friend
knocking as it starts is told it is full."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
import grpc
import pytest

from services.common.db import open_pool
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker import endings, queueing
from services.matchmaker import matcher as matcher_module
from services.matchmaker.matcher import Plan

from .harness import Store, Waiter, backend, host, join, players, refusal, store, stub

REFUSED_AS_TOO_LATE = (grpc.StatusCode.FAILED_PRECONDITION, "TICKET_MATCHING")
REFUSED_AS_FULL = (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_FULL")


async def seated(db: Store, hosting: Waiter) -> list[tuple[str, bool]]:
    """Who sits at the host's table, in seat order: (player id, is a bot)."""
    assert hosting.match is not None
    return [(r["player_id"], r["is_bot"]) for r in await db.seats(hosting.match.table_id)]


async def test_a_guest_held_by_another_claim_keeps_the_table_waiting_for_them(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann, ben = await players(b.channel(), 3)
        hosting = await host(owner, table_size=3, fill_with_bots_after_ms=1_000)
        code = hosting.ticket.invite_code
        guests = [await join(ann, code), await join(ben, code)]
        await db.backdate(hosting.ticket_id, 2)  # bots may fill the empty seats now
        # Another replica's claim holds Ben's ticket at this moment (it locks the
        # rows it reads; this one then skips them).
        other = await asyncpg.connect(fresh_dsn)
        try:
            async with other.transaction():
                await other.execute(
                    "SELECT 1 FROM tickets WHERE id = $1 FOR UPDATE",
                    uuid.UUID(guests[1].ticket_id),
                )
                assert await b.matcher().match_once() == 0, "the table started without Ben"
        finally:
            await other.close()
        assert await db.state(guests[1].ticket_id) == "queued"
        # That claim over, the table starts with all three friends and no bot.
        assert await b.matcher().match_once() == 3
        await asyncio.gather(hosting.end(), *(g.end() for g in guests))
        assert await seated(db, hosting) == [
            (owner.player_id, False),
            (ann.player_id, False),
            (ben.player_id, False),
        ]


async def test_a_private_table_straddling_the_claims_limit_starts_whole(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann, ben = await players(b.channel(), 3)
        hosting = await host(owner, table_size=3, fill_with_bots_after_ms=1_000)
        code = hosting.ticket.invite_code
        guests = [await join(ann, code), await join(ben, code)]
        await db.backdate(hosting.ticket_id, 2)
        matcher = b.matcher()
        matcher._batch = 2  # the claim's window ends with Ann's ticket
        assert await matcher.match_once() == 3
        await asyncio.gather(hosting.end(), *(g.end() for g in guests))
        assert await seated(db, hosting) == [
            (owner.player_id, False),
            (ann.player_id, False),
            (ben.player_id, False),
        ]


async def test_a_host_cancelling_as_a_claim_takes_the_table_is_told_it_is_too_late(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.0)
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann = await players(b.channel(), 2)
        hosting = await host(owner, table_size=2)
        guest = await join(ann, hosting.ticket.invite_code)
        claimed: list[Plan] = []
        close_table = endings.cancel_private

        async def claim_lands_first(*args: Any) -> bool:
            # Cancel has read the host's ticket (queued); another replica's claim
            # takes the table before Cancel closes it.
            claimed.extend(await b.matcher().claim())
            return await close_table(*args)

        monkeypatch.setattr(endings, "cancel_private", claim_lands_first)
        status, info = await refusal(
            stub(owner).Cancel(mm.CancelRequest(ticket_id=hosting.ticket_id), metadata=owner.auth)
        )
        monkeypatch.setattr(endings, "cancel_private", close_table)
        assert (status, info.reason) == REFUSED_AS_TOO_LATE
        assert len(claimed) == 1
        row = await db.ticket(hosting.ticket_id)
        assert (row["state"], row["leave_requested"]) == ("matching", True)
        # The table is made: the host is seated all the same, as they were told.
        assert await b.matcher().recover() == 1
        await asyncio.gather(hosting.end(), guest.end())
        assert hosting.match is not None and guest.match is not None
        assert hosting.match.table_id == guest.match.table_id


async def test_a_host_who_left_as_the_table_was_set_up_closes_it_if_it_cannot_be_made(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.0)
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann = await players(b.channel(), 2)
        hosting = await host(owner, table_size=2)
        guest = await join(ann, hosting.ticket.invite_code)
        # A table the game service refuses for good: its rule set is unknown there.
        await db.con.execute("UPDATE tickets SET ruleset = 'unknown'")
        assert len(await b.matcher().claim()) == 1
        status, info = await refusal(
            stub(owner).Cancel(mm.CancelRequest(ticket_id=hosting.ticket_id), metadata=owner.auth)
        )
        assert (status, info.reason) == REFUSED_AS_TOO_LATE
        assert await b.matcher().recover() == 1
        # The table cannot be made: the guest is told so, not put back in the
        # queue to wait for a host who left.
        await asyncio.gather(hosting.end(), guest.end())
        assert hosting.final.state == mm.TICKET_STATE_CANCELLED
        assert guest.final.state == mm.TICKET_STATE_EXPIRED
        assert guest.final.end_message == matcher_module.REFUSED
        assert await db.count("SELECT count(*) FROM tickets WHERE state = 'queued'") == 0


async def test_a_friend_knocking_as_the_table_starts_is_told_it_is_full(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        owner, ann, late = await players(b.channel(), 3)
        hosting = await host(owner, table_size=2)
        guest = await join(ann, hosting.ticket.invite_code)
        # Full, the table starts at once: the matching loop runs.
        await asyncio.gather(hosting.end(), guest.end())
        status, info = await refusal(join(late, hosting.ticket.invite_code))
        assert (status, info.reason) == REFUSED_AS_FULL
        assert (
            await db.count("SELECT count(*) FROM tickets WHERE player_id = $1", late.player_id) == 0
        )


async def test_a_friend_whose_table_starts_as_they_take_a_seat_is_told_it_is_full(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann, late = await players(b.channel(), 3)
        hosting = await host(owner, table_size=3, fill_with_bots_after_ms=1_000)
        code = hosting.ticket.invite_code
        guest = await join(ann, code)
        await db.backdate(hosting.ticket_id, 2)
        seated_first: list[int] = []
        take_seat = queueing.lock_private

        async def table_starts_first(*args: Any) -> Any:
            # The friend found the table waiting; it starts (with a bot in the
            # free seat) before their seat is taken.
            seated_first.append(await b.matcher().match_once())
            return await take_seat(*args)

        monkeypatch.setattr(queueing, "lock_private", table_starts_first)
        status, info = await refusal(join(late, code))
        assert (status, info.reason) == REFUSED_AS_FULL
        assert seated_first == [2]
        await asyncio.gather(hosting.end(), guest.end())
        assert (
            await db.count("SELECT count(*) FROM tickets WHERE player_id = $1", late.player_id) == 0
        )


async def test_closing_a_table_no_longer_waiting_leaves_the_tickets_under_its_code_alone(
    fresh_dsn: str,
) -> None:
    """A host's close that comes after a claim took the table (its ticket is no
    longer queued) ends nothing: a ticket still queued under that code is not
    the host's to end (one of a later table that drew the same code, say)."""
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        owner, ann = await players(b.channel(), 2)
        hosting = await host(owner, table_size=3)
        code = hosting.ticket.invite_code
        guest = await join(ann, code)
        await db.con.execute(
            "UPDATE tickets SET state = 'matching' WHERE id = $1", uuid.UUID(hosting.ticket_id)
        )
        pool = await open_pool(fresh_dsn, max_size=2)
        try:
            assert not await endings.cancel_private(pool, code, endings.HOST_LEFT)
        finally:
            await pool.close()
        assert await db.state(guest.ticket_id) == "queued"
