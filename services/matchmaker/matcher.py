"""The matching loop each matchmaker replica runs.

1. In one transaction: lock queued tickets (SKIP LOCKED, so replicas never
   share a ticket), group them, record each match with its CreateTable request
   and move its tickets to `matching`. Commit.
2. Holding its matches' rows locked, ask the game service to create the
   tables, 16 to a call (CreateTables; idempotent: each table id is chosen here
   and kept in the match). A game service too old for CreateTables gets one
   CreateTable call per table (see `table_maker`).
3. Mark the tickets `matched` and wake their streams (see `settling`).

Steps 2 and 3 of a batch run in the background while step 1 claims the next
batch, up to a few batches at once.

A replica that dies between 1 and 3 leaves matches in `creating` (unlocked
once its connection is gone); any replica picks them up after a few seconds
and repeats steps 2 and 3, so no ticket is lost and no player is seated twice.

Nothing that goes wrong stops the loop: a failed pass is logged and the next one
waits a little longer (see `backoff_s`); a match whose table the game service
refuses, or cannot make in time, or whose record cannot be read, is given up
with its tickets, saying why, rather than tried for ever (unless its table turns
out to exist: its tickets are then matched).
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import asyncpg
import structlog

from services.common import metrics, tracing
from services.common.db import Connection, Pool
from services.common.errors import DB_ERRORS
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.wire.bot_levels import level_message
from services.game.rules import BotLevel

from . import endings, settling, standing
from .aftercommit import transaction
from .claim import Place, Queue, queued
from .matching import Group, form_tables
from .table_maker import TableMaker
from .wakeups import notify

log = structlog.get_logger(__name__)

DEPTH_EVERY_S = 5.0
"""How often a replica reports the queue depth (one GROUP BY over queued tickets)."""
RECOVER_AFTER_S = 3.0
"""A match still `creating` after this long belongs to a replica presumed dead."""
HOUSEKEEPING_EVERY_S = 0.5
"""How often the loop expires old tickets and recovers dead replicas' matches.
Not every pass: under a backlog the loop passes many times a second, and the
expiry query reads every queued ticket (an expiry or a recovery a fraction of a
second later changes nothing for anyone)."""
GIVE_UP_S = 120.0
"""A match whose table the game service has not created after this long (it was
unreachable, or kept failing) ends its tickets with `NOT_STARTED`."""
NOT_STARTED = "Your table could not be started: please queue again."
REFUSED = "Your table could not be started because of a fault on our side: please queue again."
"""Why the tickets of a table the game service refused for good end."""
BATCHES_IN_FLIGHT = 4
"""Claimed batches whose tables are being created while the loop claims the next."""
BACKOFF_MAX_S = 2.0
"""The longest pause between two passes of a loop that keeps failing (the database
down, say): a failed pass waits twice as long as the one before, up to this."""


def backoff_s(interval: float, failures: int) -> float:
    """The pause after ``failures`` passes in a row failed."""
    return min(BACKOFF_MAX_S, interval * 2.0 ** min(failures, 16))


@dataclass(frozen=True, slots=True)
class Plan:
    table_id: uuid.UUID
    request: tables_pb2.CreateTableRequest
    seats: list[tuple[uuid.UUID, int]]
    traces: tuple[str, ...] = ()
    """The trace contexts its tickets were queued in, in seat order (see `tracing`)."""


def _plan(group: Group, queue: Queue) -> Plan:
    table_id = uuid.uuid4()
    ruleset, options = queue.games[group.tickets[0].family]
    players = [
        tables_pb2.SeatedPlayer(player_id=t.player_id, display_name=queue.names[t.ticket_id])
        for t in group.tickets
    ]
    players += [
        tables_pb2.SeatedPlayer(
            player_id=f"bot-{uuid.uuid4().hex[:12]}", display_name=f"Bot {i + 1}", is_bot=True
        )
        for i in range(group.bots)
    ]
    request = tables_pb2.CreateTableRequest(
        table_id=str(table_id),
        ruleset=ruleset,
        options=options,
        players=players,
    )
    if group.bots:
        request.bot_level = level_message(BotLevel(group.bot_level))
    return Plan(
        table_id,
        request,
        [(uuid.UUID(t.ticket_id), s) for s, t in enumerate(group.tickets)],
        tuple(queue.traces[t.ticket_id] for t in group.tickets if t.ticket_id in queue.traces),
    )


class Matcher:
    def __init__(
        self,
        pool: Pool,
        game: tables_pb2_grpc.TableServiceAsyncStub,
        credential: Callable[[], tuple[tuple[str, str], ...]],
        *,
        interval: float = 0.1,
        batch: int = 2000,
        give_up_s: float = GIVE_UP_S,
    ) -> None:
        self._pool = pool
        self.tables = TableMaker(game, credential)
        self._interval = interval
        self._batch = batch
        self.give_up_s = give_up_s
        self.last_loop_s = 0.0
        self._after: Place | None = None
        """Where the next claim starts in the queue (None: at its oldest ticket)."""
        self._backlog = False
        """Whether the last claim took as many tickets as it may: more wait."""

    async def run(self) -> None:
        """Claim batch after batch; each batch's tables are created in the background
        (up to BATCHES_IN_FLIGHT at once), so the next claim does not wait for them."""
        depth_at = housekept_at = -math.inf
        slots = asyncio.Semaphore(BATCHES_IN_FLIGHT)
        settling: set[asyncio.Task[None]] = set()
        failures = 0
        try:
            while True:
                started = time.perf_counter()
                matched = 0
                try:
                    if started - housekept_at >= HOUSEKEEPING_EVERY_S:
                        housekept_at = started
                        await endings.expire(self._pool)
                        await self.recover()
                    await slots.acquire()
                    try:
                        plans = await self.claim()
                    except BaseException:
                        slots.release()
                        raise
                    if plans:
                        task = asyncio.create_task(self._settle(plans, slots))
                        settling.add(task)
                        task.add_done_callback(settling.discard)
                        matched = sum(len(p.seats) for p in plans)
                    else:
                        slots.release()
                    if started - depth_at > DEPTH_EVERY_S:
                        depth_at = started
                        await standing.record_depth(self._pool)
                except (*DB_ERRORS, asyncpg.PostgresError) as error:
                    failures += 1
                    pause = backoff_s(self._interval, failures)
                    log.warning(
                        "matching_failed", error=str(error), failures=failures, retry_in_s=pause
                    )
                except Exception:
                    failures += 1
                    pause = backoff_s(self._interval, failures)
                    log.exception("matching_crashed", failures=failures, retry_in_s=pause)
                else:
                    failures = 0
                self.last_loop_s = time.perf_counter() - started
                metrics.MATCHING_LOOP.observe(self.last_loop_s)
                if failures:
                    await asyncio.sleep(pause)
                elif not (matched and self._backlog):
                    # Nothing to seat, or everyone waiting was looked at: the next
                    # pass waits for more players to come, seating them in one
                    # batch rather than a table per pass (each pass costs two
                    # transactions and a call, however few it seats).
                    await asyncio.sleep(self._interval)
        finally:
            # Stopping: a batch cut short stays `creating` and is recovered elsewhere.
            for task in settling:
                task.cancel()

    async def _settle(self, plans: list[Plan], slots: asyncio.Semaphore) -> None:
        try:
            async with self._pool.acquire() as con, transaction(con):
                await self._finish(con, plans)
        # Either way the matches stay `creating`: recovered in a few seconds.
        except (*DB_ERRORS, asyncpg.PostgresError) as error:
            log.warning("matching_failed", error=str(error))
        except Exception:
            log.exception("matching_crashed", tables=len(plans))
        finally:
            slots.release()

    async def match_once(self) -> int:
        """One claim and its tables, awaited; the number of tickets seated."""
        plans = await self.claim()
        if plans:
            async with self._pool.acquire() as con, transaction(con):
                await self._finish(con, plans)
        return sum(len(p.seats) for p in plans)

    async def claim(self) -> list[Plan]:
        """Group queued tickets and record their matches (`creating`), in one commit.

        A claim takes the oldest `batch` tickets (leaving out private tables that
        cannot start yet). When they fill the batch and seat nobody (thousands of
        tickets with options nobody else chose, say), the next claim starts halfway
        through them, and so on to the end of the queue and back to its start:
        every ticket is looked at with those up to half a batch around it, however
        many older ones wait."""
        async with self._pool.acquire() as con, transaction(con):
            queue = await queued(con, self._batch, self._after)
            self._backlog = queue.resume_after is not None
            if queue.unreadable:
                # Each would fail every claim that takes it: it ends, saying why.
                log.error("tickets_unreadable", ticket_ids=[str(t) for t in queue.unreadable])
                await notify(con, await endings.end_unreadable(con, list(queue.unreadable)))
            plans = [_plan(g, queue) for g in form_tables(queue.waiting, queue.now_ms)]
            self._after = queue.resume_after if not plans else None
            if not plans:
                return []
            await con.executemany(
                "INSERT INTO matches (table_id, request) VALUES ($1, $2)",
                [(p.table_id, p.request.SerializeToString()) for p in plans],
            )
            await con.executemany(
                "UPDATE tickets SET state = 'matching', table_id = $2, seat = $3, seated = $4"
                " WHERE id = $1",
                [
                    (tid, p.table_id, seat, len(p.request.players))
                    for p in plans
                    for tid, seat in p.seats
                ],
            )
        return plans

    async def _finish(
        self,
        con: Connection,
        plans: list[Plan],
        *,
        wait: bool = True,
        unreadable: Sequence[uuid.UUID] = (),
    ) -> None:
        """Create the tables, then settle their tickets in ``con``'s transaction.
        ``wait``: the calls wait for the game service if it is out of reach (see
        `_create`). ``unreadable``: matches (locked by the caller) whose request
        cannot be read, given up at once."""
        # Hold the matches while their tables are created: recover() on another
        # replica skips locked rows, so only a dead replica's matches are taken
        # over; and matches another replica completed meanwhile are left alone.
        left = {
            r["table_id"]: r["left_s"]
            for r in await con.fetch(
                "SELECT table_id, extract(epoch FROM created_at + make_interval(secs => $2)"
                " - clock_timestamp())::float8 AS left_s"
                " FROM matches WHERE table_id = ANY($1::uuid[]) AND state = 'creating'"
                " FOR UPDATE",
                [p.table_id for p in plans],
                self.give_up_s,
            )
        }
        # Whether each match is overdue: its table is asked for once more, then
        # the match is given up.
        pending = {table_id: left_s <= 0 for table_id, left_s in left.items()}
        plans = [p for p in plans if p.table_id in pending]
        if not plans and not unreadable:
            return
        # The calls wait for the game service as long as the soonest match to be
        # given up has left (up to a call's timeout): none is held past its time.
        soonest = min((left[p.table_id] for p in plans), default=0.0)
        with tracing.continuing(
            "create tables", [t for p in plans for t in p.traces], tables=len(plans)
        ):
            outcomes = await self._create([p.request for p in plans], soonest if wait else 0.0)
        created = [p.table_id for p, ok in zip(plans, outcomes, strict=True) if ok is True]
        refused = [p.table_id for p, ok in zip(plans, outcomes, strict=True) if ok is False]
        given_up = [
            p.table_id
            for p, ok in zip(plans, outcomes, strict=True)
            if ok is None and pending[p.table_id]
        ] + list(unreadable)
        # A table refused (ALREADY_EXISTS: made by an earlier call, asked for in
        # other words), or not answered for in `give_up_s` (an answer lost, then
        # the game service out of reach), may exist all the same: its players
        # sit there, and their tickets say so.
        found = await settling.made(con, refused + given_up)
        created += [t for t in refused + given_up if t in found]
        refused = [t for t in refused if t not in found]
        given_up = [t for t in given_up if t not in found]
        woken = await settling.seat(con, created)
        if refused:
            # The game service refused for good: formed again, the same table
            # would be refused again on every pass.
            ended = await settling.end(con, refused, REFUSED)
            log.error("matches_refused", tables=len(refused), tickets=len(ended))
            woken += ended
        if given_up:
            # Not created in `give_up_s` (or the match cannot be read), and not
            # found made: the tickets cannot go back to the queue, where a table
            # made after all would seat them twice. They end, saying why; a
            # player seated after all is told so on queueing again (ALREADY_SEATED).
            ended = await settling.end(con, given_up, NOT_STARTED)
            log.error("matches_given_up", tables=len(given_up), tickets=len(ended))
            woken += ended
        # RETURNING, not a lookup by table id: no index serves that one.
        await notify(con, woken)

    async def recover(self) -> int:
        """Finish matches whose replica stopped half-way."""
        async with self._pool.acquire() as con, transaction(con):
            rows = await con.fetch(
                "SELECT table_id, request FROM matches WHERE state = 'creating'"
                " AND created_at < now() - make_interval(secs => $1)"
                " ORDER BY created_at LIMIT 100 FOR UPDATE SKIP LOCKED",
                RECOVER_AFTER_S,
            )
            if not rows:
                return 0
            plans: list[Plan] = []
            unreadable: list[uuid.UUID] = []
            for r in rows:
                try:
                    request = tables_pb2.CreateTableRequest.FromString(r["request"])
                except Exception:
                    log.exception("match_unreadable", table_id=str(r["table_id"]))
                    unreadable.append(r["table_id"])
                    continue
                plans.append(Plan(r["table_id"], request, []))
            # Without waiting for the game service: a replica that cannot reach
            # it would otherwise hold the matches it took from the others while
            # they can (and take them again at its next pass). Its own claims
            # wait (see `_settle`): back, the game service is noticed at once.
            await self._finish(con, plans, wait=False, unreadable=unreadable)
        return len(rows)

    async def _create(
        self, requests: list[tables_pb2.CreateTableRequest], ready_within_s: float
    ) -> list[bool | None]:
        """`TableMaker.create_all`, its calls waiting up to ``ready_within_s`` for
        the game service to be reachable (0: failing at once). A fault of its own
        (not a refusal: something nobody planned for) has each table asked for
        alone; one that fails so is asked for again later, until its match is
        given up (`give_up_s`), as a table the game service keeps failing is: it
        holds up no other."""
        if not requests:
            return []
        try:
            return await self.tables.create_all(requests, ready_within_s=ready_within_s)
        except Exception:
            log.exception("create_tables_crashed", table_ids=[r.table_id for r in requests])
            if len(requests) == 1:
                return [None]
        alone = await asyncio.gather(*(self._create([r], ready_within_s) for r in requests))
        return [ok for (ok,) in alone]
