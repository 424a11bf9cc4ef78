"""Public tickets queued at the same time share one INSERT, and each call still
gets its own answer: its ticket, or None when the statement left it out."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, cast

from services.common.db import Pool
from services.matchmaker import arrivals, queueing
from services.matchmaker.arrivals import Arrival, Arrivals
from services.matchmaker.streams import Streams
from services.matchmaker.wakeups import Wakeups


def arrival(player_id: str, **changed: Any) -> Arrival:
    fields: dict[str, Any] = {
        "ticket_id": uuid.uuid4(),
        "player_id": player_id,
        "table_size": 4,
        "ruleset": "cafe",
        "options": {"turn_timer_ms": 45_000},
        "family": "cafe|fifo|{}",
        "mode": "fifo",
        "accept_smaller_ms": 0,
        "fill_bots_ms": 0,
        "bot_level": "normal",
        "trace_parent": None,
    }
    return Arrival(**(fields | changed))


class CountedPool:
    """The real pool, counting the batched statements sent through it."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self.batches: list[int] = []

    async def fetch(self, query: str, *args: Any) -> Any:
        if query == arrivals._QUEUE_ALL:
            self.batches.append(len(args[0]))
        return await self._pool.fetch(query, *args)


async def test_calls_at_once_share_statements_and_each_gets_its_ticket(pool: Pool) -> None:
    await pool.execute(
        "INSERT INTO players (id, display_name, rating) VALUES ('p-0', 'Zoé', 1712.5)"
    )
    counted = CountedPool(pool)
    store = Arrivals(cast(Pool, counted), ttl_s=60)
    wanted = [arrival(f"p-{i}", table_size=2 + i % 3) for i in range(1_200)]
    # Every call answered (none left behind between two batches).
    got = await asyncio.wait_for(asyncio.gather(*(store.store(a) for a in wanted)), 30)
    assert [g.id if g else None for g in got] == [a.ticket_id for a in wanted]
    assert [g.table_size for g in got if g] == [a.table_size for a in wanted]
    assert all(g is not None and g.state == "queued" for g in got)
    # A few statements for 1,200 calls, never more tickets in one than allowed.
    assert sum(counted.batches) == 1_200
    assert len(counted.batches) <= 1_200 // 100, counted.batches
    assert max(counted.batches) <= arrivals.MOST
    # The player's name and rating are read as the single insert reads them.
    first = await pool.fetchrow(
        "SELECT display_name, rating, expires_at - created_at AS ttl FROM tickets"
        " WHERE player_id = 'p-0'"
    )
    assert (first["display_name"], first["rating"]) == ("Zoé", 1712.5)
    assert first["ttl"].total_seconds() == 60


async def test_a_lone_call_is_stored_at_once(pool: Pool) -> None:
    counted = CountedPool(pool)
    store = Arrivals(cast(Pool, counted), ttl_s=60)
    row = await store.store(arrival("alone"))
    assert row is not None and row.player_id == "alone"
    assert counted.batches == [1]


async def test_tickets_the_checks_leave_out_come_back_as_none(pool: Pool) -> None:
    async with pool.acquire() as con:
        live = await queueing.queue_at_once(
            con,
            player_id="live",
            table_size=2,
            ruleset="cafe",
            options={},
            family="cafe|fifo|{}",
            mode="fifo",
            ttl_s=60,
        )
    assert live is not None
    store = Arrivals(pool, ttl_s=60)
    twice = [arrival("twice"), arrival("twice")]
    got = await asyncio.gather(
        store.store(arrival("live")),
        *(store.store(a) for a in twice),
        store.store(arrival("new")),
    )
    assert got[0] is None  # a live ticket already
    # The same player twice in one statement: one ticket, the other left out.
    assert sorted(g is None for g in got[1:3]) == [False, True]
    assert got[3] is not None
    assert await pool.fetchval("SELECT count(*) FROM tickets WHERE player_id = 'twice'") == 1


async def test_a_ticket_the_database_refuses_leaves_every_call_to_store_its_own(pool: Pool) -> None:
    counted = CountedPool(pool)
    store = Arrivals(cast(Pool, counted), ttl_s=60)
    fine = [arrival(f"fine-{i}") for i in range(20)]
    # A NUL byte: PostgreSQL text cannot hold it, and its statement fails whole.
    got = await asyncio.gather(
        *(store.store(a) for a in [*fine[:10], arrival("bad\x00"), *fine[10:]])
    )
    assert got[10] is None
    assert max(counted.batches) > 1  # it shared its statement with others
    left_out = [a for a, g in zip(fine, got[:10] + got[11:], strict=True) if g is None]
    assert left_out  # those of its statement
    # Each of them, alone (as the servicer then stores it), goes through.
    for a in left_out:
        assert await store.store(a) is not None
    players = await pool.fetch("SELECT player_id FROM tickets ORDER BY player_id")
    assert sorted(r["player_id"] for r in players) == sorted(a.player_id for a in fine)


async def test_a_database_out_of_reach_fails_every_call_of_the_batch(pool: Pool) -> None:
    store = Arrivals(pool, ttl_s=60)
    await pool.close()
    results = await asyncio.gather(
        *(store.store(arrival(f"x-{i}")) for i in range(3)), return_exceptions=True
    )
    assert all(isinstance(r, Exception) for r in results), results


async def test_a_closed_stream_cancels_its_ticket_only_once_it_is_stored(pool: Pool) -> None:
    # The call was cancelled while its batch was being stored: the ticket may be
    # committed after all, and its cancellation must come after that, not before.
    streams = Streams(pool, Wakeups())
    stored: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    ticket = arrival("late")
    streams.cancel_later("late", ticket.ticket_id, None, False, after=stored)
    await asyncio.sleep(0.2)  # the cancellation waits, and finds nothing yet
    assert await Arrivals(pool, ttl_s=60).store(ticket) is not None
    stored.set_result(None)
    await streams.cancelled_first("late")
    state = await pool.fetchval("SELECT state FROM tickets WHERE id = $1", ticket.ticket_id)
    assert state == "cancelled"
