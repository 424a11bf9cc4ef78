"""`rummy.v1.GameService`: a thin layer from protobuf requests to table actions (the
tables are made by `internal_servicer`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import asyncpg
import grpc
from google.protobuf.message import Message

from services.common import errors
from services.common.errors import DB_ERRORS
from services.common.identity import require_player
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import convert
from .event_kinds import form_key, table_event
from .event_wire import Viewing
from .eventlog import LoggedEvent
from .failures import guard
from .fanout import Fanout
from .moves import KeptAnswer, Move
from .presence import Presence
from .records import Committed
from .request_parsing import (
    check_request_id,
    lay_off_of,
    meld_of,
    request_digest,
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


class GameServicer(game_pb2_grpc.GameServiceServicer):
    def __init__(
        self, tables: Tables, fanout: Fanout, pool: asyncpg.Pool, presence: Presence
    ) -> None:
        self._tables = tables
        self._fanout = fanout
        self._pool = pool
        self._presence = presence

    # --- reading tables ---------------------------------------------------

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
        id the answer is kept with it as bytes: a retry is sent them, the first call
        the very message they were made of (never parsed back)."""
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

            built: list[tuple[bytes, Resp]] = []

            def kept_answer(committed: Committed) -> bytes:
                message = answer(committed)
                data = message.SerializeToString()
                built.append((data, message))
                return data

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
                    answer=kept_answer,
                )
            )
            if isinstance(moved, KeptAnswer):
                if built and moved.data is built[-1][0]:
                    return built[-1][1]  # this call's own answer, committed: no parse back
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
                yield watched(logged, viewing)
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


def watched(logged: LoggedEvent, viewing: Viewing) -> game_pb2.WatchResponse:
    """The Watch message of ``logged`` for ``viewing``: built once per form of the
    event (`form_key`), and sent as it is to every watcher who sees that form."""
    key = form_key(logged.event, viewing)
    form = logged.forms.get(key)
    if isinstance(form, game_pb2.WatchResponse):
        return form
    built = game_pb2.WatchResponse(event=table_event(logged, viewing))
    logged.forms[key] = built
    return built
