"""`rummy.v1.MatchmakerService`: queue, wait, and be told where to play."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import grpc

from services.common import errors, tracing
from services.common.db import Connection, Pool
from services.common.errors import DB_ERRORS
from services.common.identity import require_player
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import matchmaker_pb2_grpc
from services.common.rating import DEFAULT_DEVIATION, DEFAULT_RATING
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import endings, queueing, tickets
from .aftercommit import transaction
from .arrivals import Arrival, Arrivals
from .messages import ticket_message
from .queueing import AlreadyQueued, AlreadySeated, BeingSeated
from .request_checks import (
    bot_level_wanted,
    invite_not_found,
    match_mode_wanted,
    table_full,
    table_wanted,
    wait_wanted,
)
from .streams import Streams
from .tickets import TicketRow
from .wakeups import Wakeups

CODE_DRAWS = 4
"""Invite codes a new private table draws before giving up (another table
waiting with the same code: about one chance in a billion each)."""


class MatchmakerServicer(matchmaker_pb2_grpc.MatchmakerServiceServicer):
    def __init__(
        self, pool: Pool, wakeups: Wakeups, *, game_target: str = "", ticket_ttl_s: float = 300.0
    ) -> None:
        self._pool = pool
        self._game_target = game_target
        self._ttl = ticket_ttl_s
        self._streams = Streams(pool, wakeups, game_target=game_target)
        self._arrivals = Arrivals(pool, ttl_s=ticket_ttl_s)

    async def stopped(self, wait_s: float) -> None:
        """The server has stopped: the tickets of the streams it closed are
        cancelled, waiting at most ``wait_s`` (see `Streams.cancel_closed`)."""
        await self._streams.cancel_closed(wait_s)

    # --- helpers ------------------------------------------------------------

    async def _guarded(self, context: grpc.aio.ServicerContext[Any, Any], work: Any) -> Any:
        try:
            return await work
        except Refusal as refused:
            await errors.abort(
                context, refused.code, refused.reason, refused.message, metadata=refused.metadata
            )
        except asyncpg.DataError:
            # A value the database cannot hold (a NUL in a text, say).
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.MALFORMED_REQUEST,
                "The request holds a value matchmaking cannot store.",
            )
        except DB_ERRORS:
            await errors.abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                ServiceReason.DATABASE_UNAVAILABLE,
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
        await self._streams.cancelled_first(player)
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
                trace_parent=tracing.traceparent(),
                **extra,
            )
        except asyncio.CancelledError:
            self._streams.cancel_later(
                player,
                ticket_id,
                extra.get("invite_code"),
                extra.get("is_host", False),
                after=self._arrivals.pending(ticket_id),
            )
            raise

    async def _store(self, player: str, ticket_id: uuid.UUID, **wanted: Any) -> TicketRow:
        if not wanted.get("invite_code") and not wanted.get("replace"):
            # A public queue: stored with the calls arriving at the same time.
            fresh = await self._arrivals.store(
                Arrival(
                    ticket_id,
                    player,
                    wanted["table_size"],
                    wanted["ruleset"],
                    wanted["options"],
                    wanted["family"],
                    wanted["mode"],
                    wanted.get("accept_smaller_ms", 0),
                    wanted.get("fill_bots_ms", 0),
                    wanted.get("bot_level", "normal"),
                    wanted.get("trace_parent"),
                )
            )
            if fresh is not None:
                return fresh
            # Left out: the checks one by one below say why (or store it after all).
        async with self._pool.acquire() as con:
            invite_code = wanted.get("invite_code")
            if not invite_code or wanted.get("is_host"):
                return await self._insert(con, player, ticket_id, **wanted)
            # A guest: the host's ticket stays locked until the seat is taken, so
            # friends joining at the same moment cannot take more seats than there are.
            async with transaction(con):
                seats = await queueing.lock_private(con, invite_code)
                if seats is None:
                    # The table started (or closed) since it was looked up.
                    raise await self._no_table(con, invite_code)
                taken, size = seats
                if taken >= size:
                    raise table_full()
                return await self._insert(con, player, ticket_id, **wanted)

    @staticmethod
    async def _no_table(db: Connection | Pool, invite_code: str) -> Refusal:
        """Why no table waits with this code: it just started (a friend arriving as
        it filled), or there is none (unknown, closed, expired, or long gone)."""
        if invite_code.isalnum() and await queueing.started_private(db, invite_code):
            return table_full()
        return invite_not_found()

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
            fresh = await queueing.queue_at_once(
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
        seated = await queueing.seated_at(con, player)
        if seated is not None:
            raise self._seated(seated)
        profile = await con.fetchrow(queueing.PROFILE, player, ruleset)
        try:
            return await queueing.insert(
                con,
                player_id=player,
                display_name=profile["display_name"] if profile else "",
                table_size=table_size,
                ruleset=ruleset,
                options=options,
                family=family,
                mode=mode,
                rating=profile["rating"] if profile else DEFAULT_RATING,
                rating_deviation=profile["rating_deviation"] if profile else DEFAULT_DEVIATION,
                ttl_s=self._ttl,
                replace=replace,
                ticket_id=ticket_id,
                **extra,
            )
        except AlreadySeated as seated_now:
            raise self._seated(seated_now.table_id) from None
        except BeingSeated as live:
            raise Refusal(
                grpc.StatusCode.FAILED_PRECONDITION,
                ServiceReason.TICKET_MATCHING,
                "You are being seated at a table: wait a moment.",
                {"ticket_id": live.ticket_id},
            ) from None
        except AlreadyQueued as live:
            raise Refusal(
                grpc.StatusCode.ALREADY_EXISTS,
                ServiceReason.TICKET_EXISTS,
                "You are already waiting for a table.",
                {"ticket_id": live.ticket_id},
            ) from None

    def _seated(self, table_id: uuid.UUID) -> Refusal:
        return Refusal(
            grpc.StatusCode.FAILED_PRECONDITION,
            ServiceReason.ALREADY_SEATED,
            "You are already playing at a table: leave it to queue again.",
            {"table_id": str(table_id), "game_target": self._game_target},
        )

    # --- RPCs -------------------------------------------------------------------

    async def Enqueue(
        self, request: mm.EnqueueRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[mm.EnqueueResponse]:
        player = await require_player(context)

        async def start() -> TicketRow:
            ruleset, options = table_wanted(request)
            mode = match_mode_wanted(request.mode)
            family = f"{ruleset}|{mode}|{json.dumps(options, sort_keys=True)}"
            return await self._queue(
                player,
                table_size=request.table_size,
                ruleset=ruleset,
                options=options,
                family=family,
                mode=mode,
                replace=request.replace_existing,
                accept_smaller_ms=wait_wanted(
                    "accept_smaller_after_ms", request.accept_smaller_after_ms, ttl_s=self._ttl
                ),
                fill_bots_ms=wait_wanted(
                    "fill_with_bots_after_ms", request.fill_with_bots_after_ms, ttl_s=self._ttl
                ),
                bot_level=bot_level_wanted(request.bot_level).value,
            )

        row = await self._guarded(context, start())
        async for update in self._streams.follow(row, mm.EnqueueResponse):
            yield update

    async def CreatePrivateTable(
        self, request: mm.CreatePrivateTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[mm.CreatePrivateTableResponse]:
        player = await require_player(context)

        async def start() -> TicketRow:
            ruleset, options = table_wanted(request)
            fill_bots_ms = wait_wanted(
                "fill_with_bots_after_ms", request.fill_with_bots_after_ms, ttl_s=self._ttl
            )
            bot_level = bot_level_wanted(request.bot_level).value
            for _ in range(CODE_DRAWS):
                code = queueing.new_invite_code()
                try:
                    return await self._queue(
                        player,
                        table_size=request.table_size,
                        ruleset=ruleset,
                        options=options,
                        family=f"invite:{code}",
                        invite_code=code,
                        is_host=True,
                        fill_bots_ms=fill_bots_ms,
                        bot_level=bot_level,
                    )
                except asyncpg.UniqueViolationError as error:
                    if error.constraint_name != queueing.LIVE_INVITE_INDEX:
                        raise
            raise Refusal(
                grpc.StatusCode.UNAVAILABLE,
                ServiceReason.INVITE_CODES_EXHAUSTED,
                "No invite code is free right now: try again in a moment.",
            )

        row = await self._guarded(context, start())
        async for update in self._streams.follow(row, mm.CreatePrivateTableResponse, host=True):
            yield update

    async def JoinPrivateTable(
        self, request: mm.JoinPrivateTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[mm.JoinPrivateTableResponse]:
        player = await require_player(context)

        async def start() -> TicketRow:
            code = request.invite_code.strip().upper()
            host = None
            # Codes are letters and digits: anything else names no table (and a
            # NUL could not even be looked up).
            if code.isalnum():
                host = await self._pool.fetchrow(
                    "SELECT table_size, ruleset, options, family, bot_level FROM tickets"
                    " WHERE invite_code = $1 AND is_host AND state = 'queued'",
                    code,
                )
            if host is None:
                raise await self._no_table(self._pool, code)
            # Whether a seat is free is checked as the ticket is stored (`_store`).
            return await self._queue(
                player,
                table_size=host["table_size"],
                ruleset=host["ruleset"],
                options=json.loads(host["options"]),
                family=host["family"],
                invite_code=code,
                bot_level=host["bot_level"],
            )

        row = await self._guarded(context, start())
        async for update in self._streams.follow(row, mm.JoinPrivateTableResponse):
            yield update

    async def _own(self, ticket_id: str, player: str) -> TicketRow:
        try:
            row = await tickets.get(self._pool, uuid.UUID(ticket_id))
        except ValueError:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.TICKET_ID_INVALID,
                "That is not a ticket id.",
            ) from None
        if row is None or row.player_id != player:
            raise Refusal(
                grpc.StatusCode.NOT_FOUND,
                ServiceReason.TICKET_NOT_FOUND,
                "There is no such ticket.",
            )
        return row

    async def GetTicket(
        self, request: mm.GetTicketRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> mm.GetTicketResponse:
        player = await require_player(context)

        async def run() -> mm.GetTicketResponse:
            return mm.GetTicketResponse(
                ticket=ticket_message(
                    await self._own(request.ticket_id, player), game_target=self._game_target
                )
            )

        result: mm.GetTicketResponse = await self._guarded(context, run())
        return result

    async def Cancel(
        self, request: mm.CancelRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> mm.CancelResponse:
        player = await require_player(context)

        async def run() -> mm.CancelResponse:
            row = await self._own(request.ticket_id, player)
            closed = False
            if (
                row.invite_code
                and row.state == "queued"
                and await self._pool.fetchval("SELECT is_host FROM tickets WHERE id = $1", row.id)
            ):
                closed = await endings.cancel_private(
                    self._pool, row.invite_code, endings.HOST_LEFT
                )
            # A host whose table a claim took since the ticket was read leaves as
            # any other ticket does (too late, once its table is being set up).
            if not closed and await endings.cancel(self._pool, row.id, endings.LEFT) is None:
                raise Refusal(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    ServiceReason.TICKET_MATCHING,
                    "Your table is being set up: it is too late to leave the queue."
                    " You can leave the table once you are seated.",
                )
            return mm.CancelResponse(
                ticket=ticket_message(
                    await self._own(request.ticket_id, player), game_target=self._game_target
                )
            )

        result: mm.CancelResponse = await self._guarded(context, run())
        return result
