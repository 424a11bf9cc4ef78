"""Queueing again while the live ticket's table is being set up: the player is
never seated at two tables, and a replacement comes too late to take the seat
back."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from services.matchmaker import matcher as matcher_module
from services.matchmaker import queueing
from tests.game.harness import Player

from .harness import Backend, Store, Waiter, backend, enqueue, players, refusal, store

ALREADY_SEATED = (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_SEATED")


@pytest.fixture(autouse=True)
def quick_recovery(monkeypatch: pytest.MonkeyPatch) -> None:
    """A match left `creating` is taken over by the next recovery pass."""
    monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.0)


async def claimed_pair(b: Backend) -> tuple[Player, Waiter, Any]:
    """Alice and Bob queued for a table of two, and their match claimed, its table
    not made yet: Alice, her first ticket's wait and the match's plan."""
    alice, bob = await players(b.channel(), 2)
    first = await enqueue(alice, table_size=2)
    await enqueue(bob, table_size=2)
    (plan,) = await b.matcher().claim()
    return alice, first, plan


async def live_tickets(db: Store, player_id: str) -> int:
    return await db.count(
        "SELECT count(*) FROM tickets WHERE player_id = $1 AND state IN ('queued', 'matching')",
        player_id,
    )


@pytest.mark.parametrize("replace", [False, True], ids=["again", "replacing"])
async def test_queueing_again_as_the_table_is_made_is_refused_as_seated(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch, replace: bool
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        alice, first, plan = await claimed_pair(b)
        look = queueing.seated_at
        settled: list[int] = []

        async def table_made_after_the_look(con: Any, player: str) -> Any:
            seated = await look(con, player)
            if not settled:
                # The table is made, and the tickets matched, just after the
                # new request looked at the player's seats.
                settled.append(await b.matcher().recover())
            return seated

        monkeypatch.setattr(queueing, "seated_at", table_made_after_the_look)
        status, info = await refusal(enqueue(alice, table_size=2, replace_existing=replace))
        assert (status, info.reason) == ALREADY_SEATED
        assert info.metadata["table_id"] == str(plan.table_id)
        assert settled == [1]
        await first.end()
        assert first.match is not None and first.match.table_id == str(plan.table_id)
        assert await live_tickets(db, alice.player_id) == 0


async def test_a_seat_made_while_queueing_waits_for_the_live_ticket_is_seen(
    fresh_dsn: str,
) -> None:
    """The new ticket waits on the unique index for the live one, whose ending is
    not committed yet; the table is made meanwhile, after the new request's
    statement looked at the seats."""
    async with (
        backend(fresh_dsn, matching=False) as b,
        store(fresh_dsn) as db,
        store(fresh_dsn) as watch,
    ):
        alice, first, plan = await claimed_pair(b)
        ending = db.con.transaction()
        await ending.start()
        try:
            await db.con.execute(
                "UPDATE tickets SET state = 'matched', ended_at = now() WHERE table_id = $1",
                plan.table_id,
            )
            again = asyncio.ensure_future(enqueue(alice, table_size=2))

            async def waiting(s: Store) -> bool:
                return bool(
                    await s.count(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                        " AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO tickets%'"
                    )
                )

            await watch.eventually(waiting, "the new ticket waits for the live one")
            assert await b.matcher().tables.create_all([plan.request]) == [True]
            await db.con.execute(
                "UPDATE matches SET state = 'created', done_at = now() WHERE table_id = $1",
                plan.table_id,
            )
        except BaseException:
            await ending.rollback()
            raise
        await ending.commit()
        status, info = await refusal(again)
        assert (status, info.reason) == ALREADY_SEATED
        assert info.metadata["table_id"] == str(plan.table_id)
        assert await live_tickets(db, alice.player_id) == 0
        assert await db.state(first.ticket_id) == "matched"


async def test_replacing_a_ticket_whose_table_is_being_set_up_is_refused_as_too_late(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        alice, first, plan = await claimed_pair(b)
        status, info = await refusal(enqueue(alice, table_size=3, replace_existing=True))
        assert (status, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TICKET_MATCHING")
        assert info.metadata["ticket_id"] == first.ticket_id
        assert await db.state(first.ticket_id) == "matching"
        # The table is made all the same, and the player seated at it.
        assert await b.matcher().recover() == 1
        await first.end()
        assert first.match is not None and first.match.table_id == str(plan.table_id)
        assert await live_tickets(db, alice.player_id) == 0
