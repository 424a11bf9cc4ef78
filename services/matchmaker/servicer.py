"""`rummy.v1.MatchmakerService`: queue, wait, and be told where to play."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import asyncpg
import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from services.common import errors
from services.common.db import Connection, Pool
from services.common.errors import DB_ERRORS
from services.common.interceptors import require_player
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import matchmaker_pb2_grpc, table_pb2
from services.game import options as table_options
from services.game.rules.ruleset import PRESETS, preset

from . import tickets
from .tickets import AlreadyQueued, TicketRow

PROGRESS_EVERY_S = 1.0
PROGRESS_PER_S = 500
"""Progress messages a replica sends per second, at most: with more streams
waiting than that, each hears less often than every second (10,000 waiting
players must not cost 10,000 messages a second)."""
_STATES = {
    "queued": mm.TICKET_STATE_QUEUED,
    "matching": mm.TICKET_STATE_QUEUED,
    "matched": mm.TICKET_STATE_MATCHED,
    "cancelled": mm.TICKET_STATE_CANCELLED,
    "expired": mm.TICKET_STATE_EXPIRED,
}
FINAL = ("matched", "cancelled", "expired")
CANCEL_WAIT_S = 5.0
CODE_DRAWS = 4
"""Invite codes a new private table draws before giving up (another table
waiting with the same code: about one chance in a billion each)."""
"""How long a new ticket waits for the player's previous one to be cancelled."""


class Refused(Exception):
    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        metadata: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.metadata = metadata or {}


def _stamp(value: Any) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def effective_options(ruleset: str, message: table_pb2.TableOptions) -> dict[str, int]:
    """The rule set's defaults filled in, so equal tables compare equal: the queue key."""
    try:
        options = table_options.effective(preset(ruleset), message)
    except ValueError as error:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "OPTIONS_INVALID", str(error)) from None
    return dataclasses.asdict(options)


def table_wanted(
    request: mm.EnqueueRequest | mm.CreatePrivateTableRequest,
) -> tuple[str, dict[str, Any]]:
    """The rule set and effective options a queueing request asks for, checked."""
    if request.table_size not in (2, 3, 4):
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT,
            "TABLE_SIZE_INVALID",
            "A table seats 2, 3 or 4 players.",
        )
    ruleset = request.ruleset or "cafe"
    if ruleset not in PRESETS:
        raise Refused(
            grpc.StatusCode.INVALID_ARGUMENT,
            "RULESET_UNKNOWN",
            f"There is no rule set called '{ruleset}'.",
        )
    return ruleset, effective_options(ruleset, request.options)


class Wakeups:
    """One LISTEN per replica: wakes the streams whose tickets changed."""

    def __init__(self) -> None:
        self._events: dict[uuid.UUID, asyncio.Event] = {}

    def listener(self, _con: object, _pid: int, _channel: str, payload: object) -> None:
        for text in str(payload).split(","):
            with contextlib.suppress(ValueError):
                event = self._events.get(uuid.UUID(text))
                if event is not None:
                    event.set()

    @contextlib.contextmanager
    def watch(self, ticket_id: uuid.UUID) -> Any:
        event = self._events.setdefault(ticket_id, asyncio.Event())
        try:
            yield event
        finally:
            self._events.pop(ticket_id, None)

    def watched(self) -> list[uuid.UUID]:
        return list(self._events)

    def count(self) -> int:
        return len(self._events)

    def wake(self, ticket_ids: list[uuid.UUID]) -> None:
        for ticket_id in ticket_ids:
            event = self._events.get(ticket_id)
            if event is not None:
                event.set()


def _invite_not_found() -> Refused:
    return Refused(
        grpc.StatusCode.NOT_FOUND,
        "INVITE_NOT_FOUND",
        "No private table is waiting with that code.",
    )


class MatchmakerServicer(matchmaker_pb2_grpc.MatchmakerServiceServicer):
    def __init__(
        self, pool: Pool, wakeups: Wakeups, *, game_target: str = "", ticket_ttl_s: float = 300.0
    ) -> None:
        self._pool = pool
        self._wakeups = wakeups
        self._reads = tickets.Reads(pool)
        self._game_target = game_target
        self._ttl = ticket_ttl_s
        self._standing = tickets.Standing({}, {})
        self._standing_at = -math.inf
        self._background: set[asyncio.Task[Any]] = set()
        self._cancelling: dict[str, asyncio.Task[None]] = {}
        """Each player's ticket being cancelled after its stream closed here."""
        self._sweeper: asyncio.Future[None] | None = None

    # --- helpers ------------------------------------------------------------

    def ticket_message(self, row: TicketRow) -> mm.Ticket:
        message = mm.Ticket(
            ticket_id=str(row.id),
            state=_STATES[row.state],
            table_size=row.table_size,
            ruleset=row.ruleset,
            options=tickets.options_message(row.options),
            created_at=_stamp(row.created_at),
            expires_at=_stamp(row.expires_at),
            invite_code=row.invite_code or "",
            end_message=row.end_message,
        )
        if row.state == "matched":
            message.match.CopyFrom(self.match_message(row))
        return message

    def match_message(self, row: TicketRow) -> mm.Match:
        return mm.Match(
            table_id=str(row.table_id),
            seat=row.seat or 0,
            table_size=row.seated or row.table_size,
            game_target=self._game_target,
        )

    async def _progress(self, row: TicketRow, waited_s: float) -> mm.QueueProgress:
        """Where the ticket stands, from a reading of every queue at most a second old."""
        loop = asyncio.get_running_loop()
        if loop.time() - self._standing_at > PROGRESS_EVERY_S:
            self._standing_at = loop.time()
            self._standing = await tickets.standing(self._pool, self._wakeups.watched())
        progress = mm.QueueProgress(
            players_waiting=self._standing.waiting.get((row.family, row.table_size), 0),
            position=self._standing.positions.get(row.id, 0),
            waited_ms=int(waited_s * 1000),
        )
        if row.invite_code:
            progress.seats_taken = await self._pool.fetchval(
                "SELECT count(*) FROM tickets WHERE invite_code = $1 AND state = 'queued'",
                row.invite_code,
            )
        return progress

    async def _guarded(self, context: grpc.aio.ServicerContext, work: Any) -> Any:
        try:
            return await work
        except Refused as refused:
            await errors.abort(
                context, refused.code, refused.reason, refused.message, metadata=refused.metadata
            )
        except asyncpg.DataError:
            # A value the database cannot hold (a NUL in a text, say).
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "MALFORMED_REQUEST",
                "The request holds a value matchmaking cannot store.",
            )
        except DB_ERRORS:
            await errors.abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                "DATABASE_UNAVAILABLE",
                "Matchmaking is briefly unavailable: try again in a moment.",
            )

    async def _queue(
        self,
        player: str,
        *,
        table_size: int,
        ruleset: str,
        options: dict[str, int],
        family: str,
        mode: str = "fifo",
        **extra: Any,
    ) -> TicketRow:
        await self._cancelled_first(player)
        # The id is chosen here so that a stream closed while its ticket is being
        # stored can still cancel it: the insert may commit after all, and no
        # stream would be left to follow (or cancel) that ticket.
        ticket_id = uuid.uuid4()
        try:
            return await self._store(
                player,
                ticket_id,
                table_size=table_size,
                ruleset=ruleset,
                options=options,
                family=family,
                mode=mode,
                **extra,
            )
        except asyncio.CancelledError:
            self._cancel_later(
                player, ticket_id, extra.get("invite_code"), extra.get("is_host", False)
            )
            raise

    async def _store(self, player: str, ticket_id: uuid.UUID, **wanted: Any) -> TicketRow:
        async with self._pool.acquire() as con:
            invite_code = wanted.get("invite_code")
            if not invite_code or wanted.get("is_host"):
                return await self._insert(con, player, ticket_id, **wanted)
            # A guest: the host's ticket stays locked until the seat is taken, so
            # friends joining at the same moment cannot take more seats than there are.
            async with con.transaction():
                seats = await tickets.lock_private(con, invite_code)
                if seats is None:
                    raise _invite_not_found()
                taken, size = seats
                if taken >= size:
                    raise Refused(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        "TABLE_FULL",
                        "That table is already full.",
                    )
                return await self._insert(con, player, ticket_id, **wanted)

    async def _insert(
        self,
        con: Connection,
        player: str,
        ticket_id: uuid.UUID,
        *,
        table_size: int,
        ruleset: str,
        options: dict[str, int],
        family: str,
        mode: str,
        replace: bool = False,
        **extra: Any,
    ) -> TicketRow:
        if not replace:
            fresh = await tickets.queue_at_once(
                con,
                player_id=player,
                table_size=table_size,
                ruleset=ruleset,
                options=options,
                family=family,
                mode=mode,
                ttl_s=self._ttl,
                ticket_id=ticket_id,
                **extra,
            )
            if fresh is not None:
                return fresh
        # Refused, or replacing a live ticket: the checks one by one, to say why.
        seated = await tickets.seated_at(con, player)
        if seated is not None:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "ALREADY_SEATED",
                "You are already playing at a table: leave it to queue again.",
                {"table_id": str(seated), "game_target": self._game_target},
            )
        profile = await con.fetchrow(
            "SELECT display_name, rating FROM players WHERE id = $1", player
        )
        try:
            return await tickets.insert(
                con,
                player_id=player,
                display_name=profile["display_name"] if profile else "",
                table_size=table_size,
                ruleset=ruleset,
                options=options,
                family=family,
                mode=mode,
                rating=profile["rating"] if profile else 1500.0,
                ttl_s=self._ttl,
                replace=replace,
                ticket_id=ticket_id,
                **extra,
            )
        except AlreadyQueued as live:
            raise Refused(
                grpc.StatusCode.ALREADY_EXISTS,
                "TICKET_EXISTS",
                "You are already waiting for a table.",
                {"ticket_id": live.ticket_id},
            ) from None

    async def _follow(
        self,
        row: TicketRow,
        context: grpc.aio.ServicerContext,
        wrap: Callable[..., Any],
        *,
        host: bool = False,
    ) -> AsyncIterator[Any]:
        """Progress until the ticket ends; closing the stream cancels the ticket."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        ended = False
        try:
            with self._wakeups.watch(row.id) as wake:
                self._ensure_sweeper()
                yield wrap(ticket=self.ticket_message(row))
                while True:
                    # wait_for, not asyncio.timeout: on Python 3.11 a timeout that
                    # expires as the wake-up arrives leaves the task cancelled.
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(wake.wait(), self._progress_every())
                    # The ticket is read only when something happened to it: a
                    # notification, or the replica's sweep (see _sweep).
                    if wake.is_set():
                        wake.clear()
                        current = await self._reads.get(row.id)
                        if current is None:
                            return
                        if current.state in FINAL:
                            ended = True
                            yield wrap(ticket=self.ticket_message(current))
                            if current.state == "matched":
                                yield wrap(match=self.match_message(current))
                            return
                    yield wrap(progress=await self._progress(row, loop.time() - started))
        finally:
            if not ended:
                self._cancel_later(row.player_id, row.id, row.invite_code, host)

    def _progress_every(self) -> float:
        return max(PROGRESS_EVERY_S, self._wakeups.count() / PROGRESS_PER_S)

    def _ensure_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.ensure_future(self._sweep())

    async def _sweep(self) -> None:
        """While streams wait here: once a second, one query for all of them wakes
        those whose ticket ended, in case a notification was lost (a LISTEN
        connection being re-opened). Ends when no stream is left."""
        while self._wakeups.watched():
            await asyncio.sleep(PROGRESS_EVERY_S)
            ids = self._wakeups.watched()
            with contextlib.suppress(*DB_ERRORS, asyncpg.PostgresError):
                rows = await self._pool.fetch(
                    "SELECT id FROM tickets WHERE id = ANY($1::uuid[]) AND state = ANY($2::text[])",
                    ids,
                    list(FINAL),
                )
                self._wakeups.wake([r["id"] for r in rows])

    def _cancel_later(
        self, player: str, ticket_id: uuid.UUID, invite_code: str | None, host: bool
    ) -> None:
        """The stream is gone (maybe cancelled itself): cancel outside its task."""

        async def work() -> None:
            # A replica shutting down closes its pool under its streams: the
            # ticket then stays queued (GetTicket tells its fate), no error.
            with contextlib.suppress(*DB_ERRORS):
                if host and invite_code:
                    await tickets.cancel_private(self._pool, invite_code, tickets.HOST_LEFT)
                # Whatever state it is in: a ticket whose table is being set up
                # keeps the wish to leave.
                await tickets.cancel(self._pool, ticket_id, tickets.LEFT)

        task = asyncio.ensure_future(work())
        self._background.add(task)
        self._cancelling[player] = task

        def done(finished: asyncio.Task[None]) -> None:
            self._background.discard(finished)
            if self._cancelling.get(player) is finished:
                del self._cancelling[player]

        task.add_done_callback(done)

    async def _cancelled_first(self, player: str) -> None:
        """A stream the player just closed here is still cancelling its ticket: let
        that land first, so that queueing again is not refused as a second ticket."""
        pending = self._cancelling.get(player)
        if pending is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(pending), CANCEL_WAIT_S)

    # --- RPCs -------------------------------------------------------------------

    async def Enqueue(
        self, request: mm.EnqueueRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[mm.EnqueueResponse]:
        player = await require_player(context)

        async def start() -> TicketRow:
            ruleset, options = table_wanted(request)
            mode = "rating" if request.mode == mm.MATCH_MODE_RATING else "fifo"
            family = f"{ruleset}|{mode}|{json.dumps(options, sort_keys=True)}"
            return await self._queue(
                player,
                table_size=request.table_size,
                ruleset=ruleset,
                options=options,
                family=family,
                mode=mode,
                replace=request.replace_existing,
                accept_smaller_ms=min(request.accept_smaller_after_ms, 3_600_000),
                fill_bots_ms=min(request.fill_with_bots_after_ms, 3_600_000),
            )

        row = await self._guarded(context, start())
        async for update in self._follow(row, context, mm.EnqueueResponse):
            yield update

    async def CreatePrivateTable(
        self, request: mm.CreatePrivateTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[mm.CreatePrivateTableResponse]:
        player = await require_player(context)

        async def start() -> TicketRow:
            ruleset, options = table_wanted(request)
            for _ in range(CODE_DRAWS):
                code = tickets.new_invite_code()
                try:
                    return await self._queue(
                        player,
                        table_size=request.table_size,
                        ruleset=ruleset,
                        options=options,
                        family=f"invite:{code}",
                        invite_code=code,
                        is_host=True,
                        fill_bots_ms=min(request.fill_with_bots_after_ms, 3_600_000),
                    )
                except asyncpg.UniqueViolationError as error:
                    if error.constraint_name != tickets.LIVE_INVITE_INDEX:
                        raise
            raise Refused(
                grpc.StatusCode.UNAVAILABLE,
                "INVITE_CODES_EXHAUSTED",
                "No invite code is free right now: try again in a moment.",
            )

        row = await self._guarded(context, start())
        async for update in self._follow(row, context, mm.CreatePrivateTableResponse, host=True):
            yield update

    async def JoinPrivateTable(
        self, request: mm.JoinPrivateTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[mm.JoinPrivateTableResponse]:
        player = await require_player(context)

        async def start() -> TicketRow:
            code = request.invite_code.strip().upper()
            host = None
            # Codes are letters and digits: anything else names no table (and a
            # NUL could not even be looked up).
            if code.isalnum():
                host = await self._pool.fetchrow(
                    "SELECT table_size, ruleset, options, family FROM tickets"
                    " WHERE invite_code = $1 AND is_host AND state = 'queued'",
                    code,
                )
            if host is None:
                raise _invite_not_found()
            # Whether a seat is free is checked as the ticket is stored (`_store`).
            return await self._queue(
                player,
                table_size=host["table_size"],
                ruleset=host["ruleset"],
                options=json.loads(host["options"]),
                family=host["family"],
                invite_code=code,
            )

        row = await self._guarded(context, start())
        async for update in self._follow(row, context, mm.JoinPrivateTableResponse):
            yield update

    async def _own(self, ticket_id: str, player: str) -> TicketRow:
        try:
            row = await tickets.get(self._pool, uuid.UUID(ticket_id))
        except ValueError:
            raise Refused(
                grpc.StatusCode.INVALID_ARGUMENT, "TICKET_ID_INVALID", "That is not a ticket id."
            ) from None
        if row is None or row.player_id != player:
            raise Refused(grpc.StatusCode.NOT_FOUND, "TICKET_NOT_FOUND", "There is no such ticket.")
        return row

    async def GetTicket(
        self, request: mm.GetTicketRequest, context: grpc.aio.ServicerContext
    ) -> mm.GetTicketResponse:
        player = await require_player(context)

        async def run() -> mm.GetTicketResponse:
            return mm.GetTicketResponse(
                ticket=self.ticket_message(await self._own(request.ticket_id, player))
            )

        result: mm.GetTicketResponse = await self._guarded(context, run())
        return result

    async def Cancel(
        self, request: mm.CancelRequest, context: grpc.aio.ServicerContext
    ) -> mm.CancelResponse:
        player = await require_player(context)

        async def run() -> mm.CancelResponse:
            row = await self._own(request.ticket_id, player)
            if (
                row.invite_code
                and row.state == "queued"
                and await self._pool.fetchval("SELECT is_host FROM tickets WHERE id = $1", row.id)
            ):
                await tickets.cancel_private(self._pool, row.invite_code, tickets.HOST_LEFT)
            elif await tickets.cancel(self._pool, row.id, tickets.LEFT) is None:
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "TICKET_MATCHING",
                    "Your table is being set up: it is too late to leave the queue."
                    " You can leave the table once you are seated.",
                )
            return mm.CancelResponse(
                ticket=self.ticket_message(await self._own(request.ticket_id, player))
            )

        result: mm.CancelResponse = await self._guarded(context, run())
        return result
