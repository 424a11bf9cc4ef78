"""`rummy.v1.GameService`: a thin layer from protobuf requests to table actions."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import asyncpg
import grpc
import structlog
from google.protobuf.message import Message

from services.common import errors
from services.common.errors import DB_ERRORS
from services.common.failures import refusal_of_failure
from services.common.identity import require_player, require_service
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc
from services.common.wire import options
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import convert
from .event_kinds import table_event
from .event_wire import Viewing
from .failures import guard
from .fanout import Fanout
from .moves import KeptAnswer, Move
from .presence import Presence
from .records import Committed
from .request_parsing import (
    Malformed,
    bot_level_of,
    check_request_id,
    lay_off_of,
    meld_of,
    request_digest,
    seat_players,
    swap_joker_of,
    table_id_of,
)
from .rules import actions as act
from .rules.errors import Reason
from .rules.hints import hint
from .rules.scoring import meld_points
from .rules.state import Phase
from .subscription import ResumeRequired, TableGone
from .tables import Tables

Resp = TypeVar("Resp", bound=Message)
log = structlog.get_logger(__name__)
CREATED_BY_REQUEST = uuid.UUID("5b0e7f3c-2d61-4c9a-9f1e-6a3d8c7b4e21")
"""Namespace of the table ids CreateTable derives from its caller and request id
when it is given no table id (UUID version 5)."""
TABLES_PER_CALL = 32
"""CreateTables: the most tables one call makes (each holds a pool connection a
moment). The largest such call still fits a request's size limit (checked by a test)."""


class GameServicer(game_pb2_grpc.GameServiceServicer):
    def __init__(
        self, tables: Tables, fanout: Fanout, pool: asyncpg.Pool, presence: Presence
    ) -> None:
        self._tables = tables
        self._fanout = fanout
        self._pool = pool
        self._presence = presence

    # --- creating and reading tables ---------------------------------------

    async def CreateTable(
        self, request: game_pb2.CreateTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.CreateTableResponse:
        claims = await require_service(context)
        return await guard(context, self._create(request, claims.subject))

    async def CreateTables(
        self, request: game_pb2.CreateTablesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.CreateTablesResponse:
        claims = await require_service(context)
        if not 1 <= len(request.tables) <= TABLES_PER_CALL:
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.TABLES_PER_CALL,
                f"Create 1 to {TABLES_PER_CALL} tables per call.",
            )
        results = await asyncio.gather(
            *(self._create_one(t, claims.subject) for t in request.tables)
        )
        return game_pb2.CreateTablesResponse(results=results)

    async def _create_one(
        self, request: game_pb2.CreateTableRequest, caller: str
    ) -> game_pb2.CreateTableResult:
        try:
            return game_pb2.CreateTableResult(table=await self._create(request, caller))
        except Exception as error:
            refusal = refusal_of_failure(error)
            if refusal is None:
                # A fault of this table's alone: the other tables' answers still go back.
                log.error("create_table_failed", exc_info=error)
                refusal = Refusal(
                    grpc.StatusCode.INTERNAL, ServiceReason.INTERNAL, errors.INTERNAL_MESSAGE
                )
            return game_pb2.CreateTableResult(
                refused=game_pb2.TableRefusal(
                    code=refusal.code.value[0], reason=refusal.reason, message=refusal.message
                )
            )

    async def _create(
        self, request: game_pb2.CreateTableRequest, caller: str
    ) -> game_pb2.CreateTableResponse:
        try:
            table_options = options.from_message(request.options)
        except ValueError as error:
            raise Malformed(ServiceReason.OPTIONS_INVALID, str(error)) from None
        players = seat_players(request.players)
        bot_level = bot_level_of(request.bot_level, players)
        check_request_id(request.request_id)
        table_id = None
        if request.table_id:
            table_id = table_id_of(request.table_id)
        elif request.request_id:
            # The request id names the table: a retry finds the table the first made.
            table_id = uuid.uuid5(CREATED_BY_REQUEST, f"{caller}\n{request.request_id}")
        committed = await self._tables.creation.create(
            request.ruleset or "cafe",
            table_options,
            players,
            deck_order=list(request.deck_order),
            table_id=table_id,
            bot_level=bot_level,
        )
        return game_pb2.CreateTableResponse(
            table_id=str(committed.table_id), version=committed.version
        )

    async def GetTable(
        self, request: game_pb2.GetTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.GetTableResponse:
        player = await require_player(context)
        return await guard(context, self._get(request, player))

    async def _get(
        self, request: game_pb2.GetTableRequest, player: str
    ) -> game_pb2.GetTableResponse:
        committed, seats = await self._tables.store.load(table_id_of(request.table_id), player)
        return game_pb2.GetTableResponse(
            view=convert.table_view(committed, seats, request.table_id)
        )

    async def GetHint(
        self, request: game_pb2.GetHintRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.GetHintResponse:
        player = await require_player(context)
        return await guard(context, self._hint(request, player))

    async def _hint(
        self, request: game_pb2.GetHintRequest, player: str
    ) -> game_pb2.GetHintResponse:
        committed, _ = await self._tables.store.load(table_id_of(request.table_id), player)
        if committed.seat is None:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                Reason.NOT_SEATED,
                "You have no seat at this table.",
            )
        state = committed.state
        proposed = hint(state, committed.seat)
        refusal = proposed.refusal
        return game_pb2.GetHintResponse(
            melds=[game_pb2.MeldSpec(card_ids=m.cards) for m in proposed.melds],
            opening_points=sum(meld_points(m, state.ruleset) for m in proposed.melds),
            # As the engine would judge them: the table's threshold, the exemption
            # of a nearly empty hand, the deal's contract, a taken discard.
            opens=proposed.opens,
            refusal_reason=refusal.reason.value if refusal else "",
            refusal_message=refusal.message if refusal else "",
        )

    # --- the moves of a turn -----------------------------------------------

    async def _act(
        self,
        request: Any,
        context: grpc.aio.ServicerContext[Any, Any],
        action: act.Action,
        response: Callable[..., Resp],
        *,
        extra: Callable[[Committed], dict[str, Any]] | None = None,
    ) -> Resp:
        """A move: the table layer applies it; its answer is built here alone, from
        what the move committed (``extra``: the call's own fields). With a request
        id the answer is kept with it, and the call sends the bytes kept: the first
        time and on a retry alike."""
        player = await require_player(context)

        async def run() -> Resp:
            table_id = table_id_of(request.table_id)
            check_request_id(request.request_id)

            def answer(committed: Committed) -> Resp:
                return response(
                    version=committed.version,
                    view=convert.table_view(
                        committed, dict(enumerate(committed.seats)), request.table_id
                    ),
                    **(extra(committed) if extra else {}),
                )

            moved = await self._tables.moves.act(
                Move(
                    table_id=table_id,
                    player_id=player,
                    action=action,
                    request_id=request.request_id,
                    expected_version=(
                        request.expected_version if request.HasField("expected_version") else None
                    ),
                    digest=request_digest(request) if request.request_id else None,
                    answer=lambda committed: answer(committed).SerializeToString(),
                )
            )
            if isinstance(moved, KeptAnswer):
                kept = response()
                kept.ParseFromString(moved.data)
                return kept
            return answer(moved)

        return await guard(context, run())

    async def DrawStock(
        self, request: game_pb2.DrawStockRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.DrawStockResponse:
        def drawn(c: Committed) -> dict[str, Any]:
            card = convert.card(c.state.ruleset.deck, c.state.drawn)
            return {"card": card} if card is not None else {}

        return await self._act(
            request, context, act.DrawStock(), game_pb2.DrawStockResponse, extra=drawn
        )

    async def TakeDiscard(
        self, request: game_pb2.TakeDiscardRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.TakeDiscardResponse:
        return await self._act(request, context, act.TakeDiscard(), game_pb2.TakeDiscardResponse)

    async def Meld(
        self, request: game_pb2.MeldRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.MeldResponse:
        return await self._parsed(
            context,
            request,
            lambda: meld_of(request),
            game_pb2.MeldResponse,
        )

    async def LayOff(
        self, request: game_pb2.LayOffRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.LayOffResponse:
        return await self._parsed(
            context,
            request,
            lambda: lay_off_of(request),
            game_pb2.LayOffResponse,
        )

    async def SwapJoker(
        self, request: game_pb2.SwapJokerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.SwapJokerResponse:
        return await self._parsed(
            context, request, lambda: swap_joker_of(request), game_pb2.SwapJokerResponse
        )

    async def Discard(
        self, request: game_pb2.DiscardRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.DiscardResponse:
        return await self._act(
            request, context, act.Discard(request.card_id), game_pb2.DiscardResponse
        )

    async def Leave(
        self, request: game_pb2.LeaveRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.LeaveResponse:
        return await self._act(request, context, act.Leave(), game_pb2.LeaveResponse)

    async def Reposer(
        self, request: game_pb2.ReposerRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.ReposerResponse:
        return await self._act(request, context, act.Reposer(), game_pb2.ReposerResponse)

    async def Claim(
        self, request: game_pb2.ClaimRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> game_pb2.ClaimResponse:
        return await self._act(request, context, act.Claim(request.card_id), game_pb2.ClaimResponse)

    async def _parsed(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        request: Any,
        build: Callable[[], act.Action],
        response: Callable[..., Resp],
    ) -> Resp:
        await require_player(context)  # who asks comes first, as for every other move
        try:
            action = build()
        except Refusal as refusal:
            await errors.abort(context, refusal.code, refusal.reason, refusal.message)
        return await self._act(request, context, action, response)

    # --- the event stream --------------------------------------------------

    async def Watch(
        self, request: game_pb2.WatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[game_pb2.WatchResponse]:
        player = await require_player(context)
        try:
            table_id = table_id_of(request.table_id)
            committed, _ = await self._tables.store.load(table_id, player)
        except Refusal as refusal:
            await errors.abort(context, refusal.code, refusal.reason, refusal.message)
        except DB_ERRORS:
            await errors.abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                ServiceReason.DATABASE_UNAVAILABLE,
                "The game is briefly unavailable: try again in a moment.",
            )
        if request.after_seq > committed.last_seq:
            await errors.abort(
                context,
                grpc.StatusCode.OUT_OF_RANGE,
                ServiceReason.SEQ_AHEAD,
                "That position is ahead of the table's events.",
            )
        seat = committed.seat
        viewing = Viewing(seat, committed.state.ruleset, committed.state.options.contracts)
        logged_to = committed.last_seq  # the log held at least this much when the stream began
        if committed.state.phase == Phase.GAME_OVER and request.after_seq >= committed.last_seq:
            return  # a finished table has nothing more to say
        del committed, _  # an idle stream keeps no game state alive
        # A seated player's stream is their presence at the table (a spectator has none).
        lease = self._presence.arrived(table_id, seat) if seat is not None else None
        events = self._fanout.follow(table_id, request.after_seq, logged_to=logged_to)
        try:
            async for logged in events:
                yield game_pb2.WatchResponse(event=table_event(logged, viewing))
        except ResumeRequired as resume:
            await errors.abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                ServiceReason.RESUME_REQUIRED,
                resume.why,
                metadata={"after_seq": str(resume.after_seq)},
            )
        except TableGone:
            await errors.abort(
                context,
                grpc.StatusCode.NOT_FOUND,
                ServiceReason.TABLE_NOT_FOUND,
                "This table has finished and its record is no longer kept.",
            )
        finally:
            # Its subscription ends however the watch does (`contextlib.aclosing` would
            # hold an object and its dict for each idle stream).
            await events.aclose()
            if lease is not None:
                self._presence.left(lease)
