"""The matching loop each matchmaker replica runs.

1. In one transaction: lock queued tickets (SKIP LOCKED, so replicas never
   share a ticket), group them, record each match with its CreateTable request
   and move its tickets to `matching`. Commit.
2. Holding its matches' rows locked, ask the game service to create the
   tables, 16 to a call (CreateTables; idempotent: each table id is chosen here
   and kept in the match). A game service too old for CreateTables gets one
   CreateTable call per table.
3. Mark the tickets `matched` and wake their streams.

Steps 2 and 3 of a batch run in the background while step 1 claims the next
batch, up to a few batches at once.

A replica that dies between 1 and 3 leaves matches in `creating` (unlocked
once its connection is gone); any replica picks them up after a few seconds
and repeats steps 2 and 3, so no ticket is lost and no player is seated twice.
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg
import grpc
import structlog

from services.common import metrics
from services.common.db import Connection, Pool
from services.common.errors import DB_ERRORS
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc

from . import endings, standing
from .claim import Place, Queue, queued
from .matching import Group, form_tables
from .messages import options_message
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
CREATE_BATCH = 16
"""Tables per CreateTables call: one call's overhead (gRPC, credential check) for
many tables, while a few calls in flight keep the game service's pool busy."""
CREATE_IN_FLIGHT = 4
"""CreateTables calls one replica keeps in flight (64 tables): a claim of hundreds
of tables queues here rather than on the game service, where calls time out or
are cancelled. Where the game service is older, as many tables in single calls."""
BATCHES_IN_FLIGHT = 4
"""Claimed batches whose tables are being created while the loop claims the next."""
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}
PERMANENT = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.FAILED_PRECONDITION,
}


@dataclass(frozen=True, slots=True)
class Plan:
    table_id: uuid.UUID
    request: game_pb2.CreateTableRequest
    seats: list[tuple[uuid.UUID, int]]


def _plan(group: Group, queue: Queue) -> Plan:
    table_id = uuid.uuid4()
    ruleset, options = queue.games[group.tickets[0].family]
    players = [
        game_pb2.SeatedPlayer(player_id=t.player_id, display_name=queue.names[t.ticket_id])
        for t in group.tickets
    ]
    players += [
        game_pb2.SeatedPlayer(
            player_id=f"bot-{uuid.uuid4().hex[:12]}", display_name=f"Bot {i + 1}", is_bot=True
        )
        for i in range(group.bots)
    ]
    request = game_pb2.CreateTableRequest(
        table_id=str(table_id),
        ruleset=ruleset,
        options=options_message(options),
        players=players,
    )
    return Plan(
        table_id, request, [(uuid.UUID(t.ticket_id), s) for s, t in enumerate(group.tickets)]
    )


class Matcher:
    def __init__(
        self,
        pool: Pool,
        game: game_pb2_grpc.GameServiceStub,
        credential: Callable[[], tuple[tuple[str, str], ...]],
        *,
        interval: float = 0.1,
        batch: int = 2000,
    ) -> None:
        self._pool = pool
        self._game = game
        self._credential = credential
        self._interval = interval
        self._batch = batch
        self.last_loop_s = 0.0
        self._in_flight = asyncio.Semaphore(CREATE_IN_FLIGHT)
        self._singles = asyncio.Semaphore(CREATE_IN_FLIGHT * CREATE_BATCH)
        self._batched = True
        self._after: Place | None = None
        """Where the next claim starts in the queue (None: at its oldest ticket)."""

    async def run(self) -> None:
        """Claim batch after batch; each batch's tables are created in the background
        (up to BATCHES_IN_FLIGHT at once), so the next claim does not wait for them."""
        depth_at = housekept_at = -math.inf
        slots = asyncio.Semaphore(BATCHES_IN_FLIGHT)
        settling: set[asyncio.Task[None]] = set()
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
                    log.warning("matching_failed", error=str(error))
                self.last_loop_s = time.perf_counter() - started
                metrics.MATCHING_LOOP.observe(self.last_loop_s)
                if not matched:
                    await asyncio.sleep(self._interval)
        finally:
            # Stopping: a batch cut short stays `creating` and is recovered elsewhere.
            for task in settling:
                task.cancel()

    async def _settle(self, plans: list[Plan], slots: asyncio.Semaphore) -> None:
        try:
            async with self._pool.acquire() as con, con.transaction():
                await self._finish(con, plans)
        except (*DB_ERRORS, asyncpg.PostgresError) as error:
            log.warning("matching_failed", error=str(error))  # recovered in a few seconds
        finally:
            slots.release()

    async def match_once(self) -> int:
        """One claim and its tables, awaited; the number of tickets seated."""
        plans = await self.claim()
        if plans:
            async with self._pool.acquire() as con, con.transaction():
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
        async with self._pool.acquire() as con, con.transaction():
            queue = await queued(con, self._batch, self._after)
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

    async def _finish(self, con: Connection, plans: list[Plan]) -> None:
        """Create the tables, then settle their tickets in ``con``'s transaction."""
        # Hold the matches while their tables are created: recover() on another
        # replica skips locked rows, so only a dead replica's matches are taken
        # over; and matches another replica completed meanwhile are left alone.
        pending = {
            r["table_id"]: r["overdue"]
            for r in await con.fetch(
                "SELECT table_id, created_at < now() - make_interval(secs => $2) AS overdue"
                " FROM matches WHERE table_id = ANY($1::uuid[]) AND state = 'creating'"
                " FOR UPDATE",
                [p.table_id for p in plans],
                GIVE_UP_S,
            )
        }
        plans = [p for p in plans if p.table_id in pending]
        if not plans:
            return
        outcomes = await self._create_all([p.request for p in plans])
        created = [p.table_id for p, ok in zip(plans, outcomes, strict=True) if ok is True]
        failed = [p.table_id for p, ok in zip(plans, outcomes, strict=True) if ok is False]
        given_up = [
            p.table_id
            for p, ok in zip(plans, outcomes, strict=True)
            if ok is None and pending[p.table_id]
        ]
        woken: list[uuid.UUID] = []
        if created:
            await con.execute(
                "UPDATE matches SET state = 'created', done_at = now()"
                " WHERE table_id = ANY($1::uuid[])",
                created,
            )
            # The clock now, not the transaction's start: the wait includes the
            # table's creation.
            rows = await con.fetch(
                "UPDATE tickets SET state = 'matched', ended_at = clock_timestamp()"
                " WHERE table_id = ANY($1::uuid[]) AND state = 'matching'"
                f" RETURNING {endings.ENDED}, table_id, seated",
                created,
            )
            endings.record_ended(rows, "matched")
            tables = {r["table_id"]: r for r in rows}
            for r in tables.values():
                queue = metrics.queue_label(r["seated"], r["ruleset"], private=r["private"])
                metrics.MATCHES.labels(queue).inc()
            woken += [r["id"] for r in rows]
        if failed or given_up:
            await con.execute(
                "UPDATE matches SET state = 'failed', done_at = now()"
                " WHERE table_id = ANY($1::uuid[])",
                failed + given_up,
            )
        if failed:
            # The game service refused the table for good: back to the queue, but
            # for those who asked to leave meanwhile (nobody waits on their ticket).
            rows = await con.fetch(
                "UPDATE tickets SET state = CASE WHEN leave_requested THEN 'cancelled'"
                " ELSE 'queued' END, table_id = NULL, seat = NULL, seated = NULL,"
                " ended_at = CASE WHEN leave_requested THEN clock_timestamp() END,"
                " end_message = CASE WHEN leave_requested THEN $2 ELSE '' END"
                " WHERE table_id = ANY($1::uuid[]) AND state = 'matching'"
                f" RETURNING {endings.ENDED}, state",
                failed,
                endings.LEFT,
            )
            endings.record_ended([r for r in rows if r["state"] == "cancelled"], "cancelled")
            woken += [r["id"] for r in rows]
        if given_up:
            # Not created in GIVE_UP_S: the game service may have made the table
            # all the same (an answer lost), so the tickets cannot go back to the
            # queue, where they could be seated twice. They end, saying why; a
            # player seated after all is told so on queueing again (ALREADY_SEATED).
            rows = await con.fetch(
                "UPDATE tickets SET state = CASE WHEN leave_requested THEN 'cancelled'"
                " ELSE 'expired' END, ended_at = clock_timestamp(),"
                " end_message = CASE WHEN leave_requested THEN $2 ELSE $3 END"
                " WHERE table_id = ANY($1::uuid[]) AND state = 'matching'"
                f" RETURNING {endings.ENDED}, state",
                given_up,
                endings.LEFT,
                NOT_STARTED,
            )
            for outcome in ("cancelled", "expired"):
                endings.record_ended([r for r in rows if r["state"] == outcome], outcome)
            log.error("matches_given_up", tables=len(given_up), tickets=len(rows))
            woken += [r["id"] for r in rows]
        # RETURNING, not a lookup by table id: no index serves that one.
        await notify(con, woken)

    async def _create_all(self, requests: list[game_pb2.CreateTableRequest]) -> list[bool | None]:
        """Each table: True once it exists, False if refused for good, None to retry
        later. Asked in batches of CREATE_BATCH tables, a few batches at once."""
        batches = [requests[i : i + CREATE_BATCH] for i in range(0, len(requests), CREATE_BATCH)]
        outcomes = await asyncio.gather(*(self._create_batch(b) for b in batches))
        return [ok for batch in outcomes for ok in batch]

    async def _create_batch(self, requests: list[game_pb2.CreateTableRequest]) -> list[bool | None]:
        if self._batched:
            async with self._in_flight:
                # Asked again: a batch that waited for its turn may find it known by now.
                outcomes = await self._create_together(requests) if self._batched else None
            if outcomes is not None:
                return outcomes
        # A game service older than this replica (mid-upgrade): one call per table.
        return list(await asyncio.gather(*(self._create(r) for r in requests)))

    async def _create_together(
        self, requests: list[game_pb2.CreateTableRequest]
    ) -> list[bool | None] | None:
        """One CreateTables call; None from a game service that does not have it."""
        try:
            reply = await self._game.CreateTables(
                game_pb2.CreateTablesRequest(tables=requests),
                metadata=self._credential(),
                timeout=10,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                self._batched = False
                return None
            log.warning("create_tables_failed", tables=len(requests), code=error.code().name)
            permanent = error.code() in PERMANENT
            return [False if permanent else None] * len(requests)
        outcomes: list[bool | None] = []
        for request, result in zip(requests, reply.results, strict=True):
            if result.HasField("table"):
                outcomes.append(True)
                continue
            code = _STATUS_CODES.get(result.refused.code, grpc.StatusCode.UNKNOWN)
            log.warning(
                "create_table_failed",
                table_id=request.table_id,
                code=code.name,
                detail=result.refused.message,
            )
            outcomes.append(False if code in PERMANENT else None)
        return outcomes

    async def _create(self, request: game_pb2.CreateTableRequest) -> bool | None:
        """One table by itself (CreateTable): as `_create_all` says."""
        try:
            async with self._singles:
                await self._game.CreateTable(request, metadata=self._credential(), timeout=10)
            return True
        except grpc.aio.AioRpcError as error:
            log.warning(
                "create_table_failed",
                table_id=request.table_id,
                code=error.code().name,
                detail=error.details(),
            )
            return False if error.code() in PERMANENT else None

    async def recover(self) -> int:
        """Finish matches whose replica stopped half-way."""
        async with self._pool.acquire() as con, con.transaction():
            rows = await con.fetch(
                "SELECT table_id, request FROM matches WHERE state = 'creating'"
                " AND created_at < now() - make_interval(secs => $1)"
                " ORDER BY created_at LIMIT 100 FOR UPDATE SKIP LOCKED",
                RECOVER_AFTER_S,
            )
            if not rows:
                return 0
            plans = [
                Plan(r["table_id"], game_pb2.CreateTableRequest.FromString(r["request"]), [])
                for r in rows
            ]
            await self._finish(con, plans)
        return len(plans)
