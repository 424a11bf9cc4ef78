"""How waiting streams learn that their ticket changed: NOTIFY, and a sweep when
a notification is lost."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import asyncpg

from services.common.db import migrate, open_pool
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker.wakeups import CHANNEL, Wakeups, notify

from .harness import backend, enqueue, players, store


async def test_one_notify_call_wakes_any_number_of_tickets(fresh_dsn: str) -> None:
    # A match of many tables wakes thousands of streams at once; PostgreSQL caps
    # one NOTIFY payload below 8,000 bytes (about 200 ticket ids).
    pool = await open_pool(fresh_dsn, max_size=2)
    listener = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(pool)
        wakeups = Wakeups()
        await listener.add_listener(CHANNEL, wakeups.listener)
        ids = [uuid.uuid4() for _ in range(1_000)]
        with contextlib.ExitStack() as stack:
            events = [stack.enter_context(wakeups.watch(i)) for i in ids]
            await notify(pool, ids)
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 10)
    finally:
        await listener.close()
        await pool.close()


async def test_a_change_without_a_notification_still_reaches_the_stream(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        waiter = await enqueue(alice, table_size=4)
        # Behind the service's back, as if the notification had been lost.
        await db.con.execute(
            "UPDATE tickets SET state = 'cancelled', ended_at = now(),"
            " end_message = 'Cancelled by an operator.' WHERE id = $1",
            uuid.UUID(waiter.ticket_id),
        )
        await waiter.end(timeout=10)
        assert waiter.final.state == mm.TICKET_STATE_CANCELLED
        assert waiter.final.end_message == "Cancelled by an operator."


def test_progress_turns_go_round_every_waiting_stream_in_order() -> None:
    # 2,500 streams on one replica, 500 woken at a time: after 5 turns each
    # stream was woken once, in the order the streams came.
    wakeups = Wakeups()
    ids = [uuid.uuid4() for _ in range(2_500)]
    watches = [wakeups.watch(i) for i in ids]
    events = [w.__enter__() for w in watches]
    heard: list[int] = []
    for _ in range(5):
        assert wakeups.nudge(500) == 500
        for n, event in enumerate(events):
            if event.is_set():
                heard.append(n)
                event.clear()
    assert heard == list(range(2_500))
    assert not any(e.changed for e in events)  # a turn is not a change
    # Streams that ended leave the turns; one that came since waits for its own.
    for w in watches[:2_000]:
        w.__exit__(None, None, None)
    with wakeups.watch(uuid.uuid4()) as late:
        assert wakeups.nudge(10_000) == 501
        assert late.is_set()
        assert all(e.is_set() for e in events[2_000:])
        assert not any(e.is_set() for e in events[:2_000])
    for w in watches[2_000:]:
        w.__exit__(None, None, None)
    assert wakeups.nudge(10) == 0
