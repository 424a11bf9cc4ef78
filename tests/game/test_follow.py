"""`Fanout.follow`, the Watch protocol without gRPC: the log, then live events,
each once and in order, until the game's end or a reason to resume."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import UTC, datetime

import pytest

from services.common.db import Pool
from services.game import eventlog
from services.game.eventlog import READ_BATCH, LoggedEvent
from services.game.fanout import Fanout
from services.game.rules import events as ev
from services.game.subscription import STOPPING, ResumeRequired, TableGone

from .harness import WAIT_S

NOW = datetime.now(UTC)


def turn(seq: int) -> LoggedEvent:
    return LoggedEvent(seq, seq, ev.TurnBegan(seat=seq % 2, turn=seq, deadline_ms=0), NOW)


async def logged_table(pool: Pool, events: list[LoggedEvent]) -> uuid.UUID:
    """A table whose log holds ``events``."""
    table_id = uuid.uuid4()
    await pool.execute(
        "INSERT INTO tables (id, ruleset, state) VALUES ($1, 'cafe', '\\x00')", table_id
    )
    await append(pool, table_id, events)
    return table_id


async def append(pool: Pool, table_id: uuid.UUID, events: list[LoggedEvent]) -> None:
    """Log ``events``, as a commit does before it announces them."""
    async with pool.acquire() as con, con.transaction():
        await con.executemany(
            "INSERT INTO table_events (table_id, seq, version, kind, payload)"
            " VALUES ($1, $2, $3, $4, $5)",
            [
                (table_id, e.seq, e.version, eventlog.kind_of(e.event), eventlog.encode(e.event))
                for e in events
            ],
        )
        await con.execute("UPDATE tables SET last_seq = $2 WHERE id = $1", table_id, events[-1].seq)


async def test_a_watcher_reads_the_log_then_takes_live_events_until_the_game_ends(
    pool: Pool, fresh_dsn: str
) -> None:
    backlog = [turn(seq) for seq in range(1, READ_BATCH + 51)]  # more than one read
    head = backlog[-1].seq
    table_id = await logged_table(pool, backlog)
    fanout = Fanout(pool, fresh_dsn)
    seen: list[int] = []
    moved = asyncio.Event()

    async def watch() -> None:
        events = fanout.follow(table_id, 10, logged_to=head)
        async with contextlib.aclosing(events):
            async for item in events:
                seen.append(item.seq)
                moved.set()

    async def reached(seq: int) -> None:
        while not seen or seen[-1] < seq:
            moved.clear()
            await moved.wait()

    async with asyncio.timeout(WAIT_S):
        watcher = asyncio.create_task(watch())
        await reached(head)
        played = [turn(head + 1), turn(head + 2)]
        await append(pool, table_id, played)
        fanout.published(table_id, played)
        await reached(head + 2)
        ended = ev.GameEnded(winner=0, reason=ev.EndReason.WENT_OUT, totals=(0, 9))
        last = [LoggedEvent(head + 3, head + 3, ended, NOW)]
        await append(pool, table_id, last)
        fanout.published(table_id, last)
        await watcher  # the game's end ends the watch
    assert seen == list(range(11, head + 4)), "every event once, in order"
    assert fanout.streams == 0, "the subscription ends with the watch"


async def test_a_watcher_sent_to_resume_is_told_from_where(pool: Pool, fresh_dsn: str) -> None:
    table_id = await logged_table(pool, [turn(seq) for seq in range(1, 6)])
    fanout = Fanout(pool, fresh_dsn)
    events = fanout.follow(table_id, 0, logged_to=5)
    with pytest.raises(ResumeRequired) as resume:
        async with contextlib.aclosing(events), asyncio.timeout(WAIT_S):
            async for item in events:
                if item.seq == 3:
                    fanout.close_streams()  # the replica stops: asked at the next read
    assert (resume.value.why, resume.value.after_seq) == (STOPPING, 5)
    assert fanout.streams == 0


async def test_a_log_that_ends_short_of_where_the_table_was_is_a_table_gone(
    pool: Pool, fresh_dsn: str
) -> None:
    table_id = await logged_table(pool, [turn(seq) for seq in range(1, 4)])
    fanout = Fanout(pool, fresh_dsn)
    events = fanout.follow(table_id, 0, logged_to=7)
    with pytest.raises(TableGone):
        async with contextlib.aclosing(events), asyncio.timeout(WAIT_S):
            async for _ in events:
                pass
    assert fanout.streams == 0
