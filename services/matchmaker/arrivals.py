"""Players queueing for public tables at about the same time: their tickets are
stored by one statement, in one commit, rather than one each.

In a rush (a tournament opening, thousands tapping "play" at once) every
Enqueue call stores its ticket; one INSERT per call costs a round trip, a
statement and a commit each, on the replica and on the database. Calls that
reach this point while earlier batches are still being stored wait for the
next batch, so the busier the replica, the bigger its batches; a lone call is
stored at once. Each call still gets its answer only once its ticket is
committed.

A ticket the statement leaves out (the player is seated, or holds a live
ticket) comes back as None: the caller looks into why on its own. A statement
the database refuses as a whole (a value it cannot store in one of the
tickets) has each call store its ticket alone, so that only that call fails.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass
from typing import Any

import asyncpg

from services.common.db import Pool
from services.common.rating import DEFAULT_DEVIATION, DEFAULT_RATING

from .tickets import COLUMNS, TicketRow

IN_FLIGHT = 2
"""Batches being stored at once; later calls gather into the next one."""
MOST = 500
"""Tickets in one statement at most."""


@dataclass(frozen=True, slots=True)
class Arrival:
    """A public ticket to store (no invite code, not replacing another)."""

    ticket_id: uuid.UUID
    player_id: str
    table_size: int
    ruleset: str
    options: dict[str, Any]
    family: str
    mode: str
    accept_smaller_ms: int
    fill_bots_ms: int
    bot_level: str
    trace_parent: str | None


_QUEUE_ALL = (
    "INSERT INTO tickets (id, player_id, display_name, table_size, ruleset, options, family,"
    " mode, rating, accept_smaller_ms, fill_bots_ms, expires_at, bot_level, trace_parent,"
    " rating_deviation)"
    " SELECT w.id, w.player_id, coalesce(p.display_name, ''), w.table_size, w.ruleset,"
    " w.options::jsonb, w.family, w.mode, coalesce(s.rating, p.rating, $12),"
    " w.accept_smaller_ms, w.fill_bots_ms, now() + make_interval(secs => $14), w.bot_level,"
    " w.trace_parent, coalesce(s.deviation, p.rating_deviation, $13)"
    " FROM unnest($1::uuid[], $2::text[], $3::smallint[], $4::text[], $5::text[], $6::text[],"
    " $7::text[], $8::integer[], $9::integer[], $10::text[], $11::text[])"
    " AS w(id, player_id, table_size, ruleset, options, family, mode, accept_smaller_ms,"
    " fill_bots_ms, bot_level, trace_parent)"
    " LEFT JOIN LATERAL (SELECT display_name, rating, rating_deviation FROM players"
    " WHERE id = w.player_id LIMIT 1) p ON true"
    " LEFT JOIN LATERAL (SELECT rating, deviation FROM player_standings"
    " WHERE player_id = w.player_id AND ruleset = w.ruleset LIMIT 1) s ON true"
    " LEFT JOIN LATERAL (SELECT 1 AS found FROM tickets k WHERE k.player_id = w.player_id"
    " AND k.state IN ('queued', 'matching') LIMIT 1) live ON true"
    " LEFT JOIN LATERAL (SELECT 1 AS found FROM table_seats ts JOIN tables t ON t.id = ts.table_id"
    " WHERE ts.player_id = w.player_id AND ts.left_at IS NULL AND t.status = 'active'"
    " LIMIT 1) seated ON true"
    " WHERE live.found IS NULL AND seated.found IS NULL"
    " ON CONFLICT (player_id) WHERE state IN ('queued', 'matching') DO NOTHING"
    f" RETURNING {COLUMNS}"
)
"""`queueing.queue_at_once` for many tickets: the same checks, row by row. Two
tickets of one player in a batch: the unique index keeps the first.

Each lookup is a LATERAL subquery with LIMIT 1, which the planner cannot fold
into a join: it stays one index probe per ticket. Written as joins and NOT
EXISTS, the planner (misled by the 100 rows it guesses for `unnest`, or by
statistics not yet gathered) read every player, and compared each ticket with
every live ticket: 15 ms for a batch of 11 in a rush of 6,000."""


class Arrivals:
    """One replica's public tickets being stored, batch after batch."""

    def __init__(self, pool: Pool, *, ttl_s: float) -> None:
        self._pool = pool
        self._ttl_s = ttl_s
        self._waiting: list[tuple[Arrival, asyncio.Future[TicketRow | None]]] = []
        self._pending: dict[uuid.UUID, asyncio.Future[TicketRow | None]] = {}
        """Each ticket not answered for yet, by id."""
        self._storing = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def store(self, arrival: Arrival) -> TicketRow | None:
        """The ticket as stored (committed); None if the statement left it out."""
        answer: asyncio.Future[TicketRow | None] = asyncio.get_running_loop().create_future()
        self._pending[arrival.ticket_id] = answer

        def settled(done: asyncio.Future[TicketRow | None]) -> None:
            self._pending.pop(arrival.ticket_id, None)
            if not done.cancelled():
                done.exception()  # seen: a caller cancelled meanwhile no longer awaits it

        answer.add_done_callback(settled)
        self._waiting.append((arrival, answer))
        self._start()
        # Shielded: a call cancelled meanwhile leaves the batch (and the others) be.
        return await asyncio.shield(answer)

    def pending(self, ticket_id: uuid.UUID) -> asyncio.Future[TicketRow | None] | None:
        """The answer this ticket waits for, while its batch is being stored: a call
        cancelled meanwhile cancels its ticket once the batch is done, not before
        (the ticket may be committed after all)."""
        return self._pending.get(ticket_id)

    def _start(self) -> None:
        while self._waiting and self._storing < IN_FLIGHT:
            batch, self._waiting = self._waiting[:MOST], self._waiting[MOST:]
            self._storing += 1
            task = asyncio.create_task(self._store(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _store(self, batch: list[tuple[Arrival, asyncio.Future[TicketRow | None]]]) -> None:
        try:
            await asyncio.sleep(0)  # calls arriving in this turn of the loop join in
            joining = self._waiting[: MOST - len(batch)]
            del self._waiting[: len(joining)]
            batch += joining
            try:
                rows = await self._pool.fetch(_QUEUE_ALL, *self._columns([a for a, _ in batch]))
            except (asyncpg.DataError, asyncpg.IntegrityConstraintViolationError):
                # One ticket the database cannot store fails the statement: each
                # call stores its own, and only that one is refused.
                for _, answer in batch:
                    if not answer.done():
                        answer.set_result(None)
                return
            except Exception as error:
                for _, answer in batch:
                    if not answer.done():
                        answer.set_exception(error)
                return
            except BaseException:
                for _, answer in batch:
                    answer.cancel()
                raise
            stored = {r["id"]: TicketRow.of(r) for r in rows}
            for arrival, answer in batch:
                if not answer.done():
                    answer.set_result(stored.get(arrival.ticket_id))
        finally:
            self._storing -= 1
            self._start()

    def _columns(self, batch: list[Arrival]) -> tuple[Any, ...]:
        return (
            [a.ticket_id for a in batch],
            [a.player_id for a in batch],
            [a.table_size for a in batch],
            [a.ruleset for a in batch],
            [json.dumps(a.options) for a in batch],
            [a.family for a in batch],
            [a.mode for a in batch],
            [a.accept_smaller_ms for a in batch],
            [a.fill_bots_ms for a in batch],
            [a.bot_level for a in batch],
            [a.trace_parent for a in batch],
            DEFAULT_RATING,
            DEFAULT_DEVIATION,
            self._ttl_s,
        )
