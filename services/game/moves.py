"""A player's move on a table (`TableMoves.act`), by the commit protocol of
`store`:

1. Judged from the table as this replica knows it (its own last commit or read
   of it, on its estimate of the database's clock): one round trip, the write,
   when nobody moved the table since.
2. Otherwise, or when the known state refuses the move (the stored one may
   differ), the table is read, with its seats and what the request id already
   holds, and the move judged from that.
3. Written only over the version judged from (`TableStore.commit`); when
   another change got there first, read and judged again.

A request id makes a move idempotent (AIP-155): the call's answer is kept with
it in the move's own commit, and a retry gets those very bytes; a refusal is
kept too, so a retry gets no second chance once the table has moved on.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import structlog

from services.common import metrics
from services.common.db import Connection
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .autoplay import House
from .outcomes import refusal_of
from .records import Committed, Known, RequestAnswer, bot_level
from .rules.actions import Action
from .rules.engine import apply
from .rules.errors import Reason, RuleError
from .store import TableStore

CAS_ATTEMPTS = 8
"""Reads and retries of one move that keeps losing races (in play, at most one or two)."""

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class Move:
    """One player's action, as a call asks for it."""

    table_id: uuid.UUID
    player_id: str
    action: Action
    request_id: str = ""
    """The player's id for this request, whatever the call, or empty."""
    expected_version: int | None = None
    digest: bytes | None = None
    """Of what the request asked (all but its id), kept with its answer: the same
    id sent with another request is refused (REQUEST_ID_REUSED)."""
    answer: Callable[[Committed], bytes] | None = None
    """With a request id: the call's answer to what the move committed, as the
    bytes it sends, kept with the id. The caller's encoding: never read here."""

    def __post_init__(self) -> None:
        if self.request_id and self.answer is None:
            raise ValueError("a move with a request id needs its answer")


@dataclass(frozen=True, slots=True)
class KeptAnswer:
    """The answer kept with a move's request id: what the call answers, the first
    time and on every retry alike."""

    data: bytes


def _reused() -> Refusal:
    return Refusal(
        grpc.StatusCode.INVALID_ARGUMENT,
        ServiceReason.REQUEST_ID_REUSED,
        "This request id was already used for another move: send each move with a new one.",
    )


def _stale() -> Refusal:
    return Refusal(
        grpc.StatusCode.ABORTED,
        ServiceReason.VERSION_STALE,
        "The table has moved on since you looked: refresh and try again.",
    )


_Outcome = tuple[Committed | KeptAnswer, Committed | None]
"""What a move is answered with, and what this call committed (None: a retry's)."""


class TableMoves:
    """The players' moves, judged from the table at a version and committed over it."""

    def __init__(self, store: TableStore, house: House) -> None:
        self._store = store
        self._house = house

    async def act(self, move: Move) -> Committed | KeptAnswer:
        """Apply one player's action: what it committed, or with a request id the
        answer kept with it (the first time as on a retry). A retry whose digest
        differs from the first request's is refused (REQUEST_ID_REUSED)."""
        kind = type(move.action).__name__
        started = time.perf_counter()
        try:
            outcome, committed = await self._act(move)
        except Refusal as refusal:
            metrics.ACTIONS.labels(kind, refusal.reason).inc()
            log.info(
                "action_refused", table_id=str(move.table_id), action=kind, reason=refusal.reason
            )
            raise
        metrics.DB_TRANSACTION.labels("action").observe(time.perf_counter() - started)
        metrics.ACTIONS.labels(kind, "replayed" if committed is None else "applied").inc()
        if committed is not None:
            log.debug(
                "action_applied",
                table_id=str(move.table_id),
                action=kind,
                version=committed.version,
            )
        return outcome

    async def _act(self, move: Move) -> _Outcome:
        async with self._store.pool.acquire() as con:
            outcome = await self._from_known(con, move)
            tries = 0
            while outcome is None and tries < CAS_ATTEMPTS:
                outcome = await self._from_read(con, move)
                tries += 1
        if outcome is None:
            raise Refusal(
                grpc.StatusCode.ABORTED,
                ServiceReason.CONFLICT,
                "Another move got there first: try again.",
            )
        return outcome

    async def _from_known(self, con: Connection, move: Move) -> _Outcome | None:
        """The move judged from the table as this replica knows it, written if the
        table is still there. None when it is not known, or the move needs the
        stored table (a refusal, a retried request, a move another replica got in
        first): then `_from_read` reads it."""
        known = self._store.known(move.table_id)
        now_ms = self._store.now_ms()
        if known is None or now_ms is None:
            metrics.KNOWN_STATE_MOVES.labels("unknown").inc()
            return None
        outcome = None
        seat = known.seat_of(move.player_id)
        if seat is not None and move.expected_version in (None, known.version):
            try:
                change = self._judged(known, seat, move.action, now_ms)
            except Refusal:
                pass  # judged again from the stored table, which may differ
            else:
                outcome = await self._commit(con, move, change)
        metrics.KNOWN_STATE_MOVES.labels("committed" if outcome else "read").inc()
        return outcome

    async def _from_read(self, con: Connection, move: Move) -> _Outcome | None:
        """One read, and the move judged from it and written; None when another
        change got there first."""
        read = await self._store.read(
            con, table_id=move.table_id, player_id=move.player_id, request_id=move.request_id
        )
        if read is None:
            raise Refusal(
                grpc.StatusCode.NOT_FOUND, ServiceReason.TABLE_NOT_FOUND, "There is no such table."
            )
        kept = read.request
        if kept is not None:
            if kept.digest is not None and kept.digest != move.digest:
                raise _reused()
            if kept.refusal is not None:
                raise kept.refusal
            assert kept.answer is not None  # an answer or a refusal, always
            return KeptAnswer(kept.answer), None
        table = read.table
        seat = table.seat_of(move.player_id)
        if seat is None:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                Reason.NOT_SEATED,
                "You have no seat at this table.",
            )
        try:
            if move.expected_version not in (None, table.version):
                raise _stale()
            change = self._judged(table, seat, move.action, read.now_ms)
        except Refusal as refusal:
            if not move.request_id or not read.active:
                raise  # a finished table cannot move on: nothing to keep
            # Kept, so a retry gets this refusal rather than a second chance once
            # the table has moved on; unless a retry's answer is already kept.
            if await self._store.remember_refusal(
                con,
                table_id=move.table_id,
                player_id=move.player_id,
                request_id=move.request_id,
                refusal=refusal,
                digest=move.digest,
            ):
                raise
            return None
        return await self._commit(con, move, change)

    def _judged(self, table: Known, seat: int, action: Action, now_ms: int) -> Committed:
        """The engine's move on ``table``, then what the table does by itself."""
        try:
            state, events = apply(table.state, seat, action, now_ms)
        except RuleError as error:
            raise refusal_of(error) from None
        state, events = self._house.followed(
            state, events, now_ms, bots=table.bot_seats, level=bot_level(table.seats)
        )
        return table.advanced(state=state, events=events, seat=seat, now_ms=now_ms)

    async def _commit(self, con: Connection, move: Move, change: Committed) -> _Outcome | None:
        """Write the move with its answer; None when the table moved meanwhile, or
        a retry of this request was answered first."""
        answer = None
        if move.request_id and move.answer is not None:
            answer = RequestAnswer(
                player_id=move.player_id,
                request_id=move.request_id,
                answer=move.answer(change),
                digest=move.digest,
            )
        if not await self._store.commit(con, change, answer=answer):
            return None
        return (change if answer is None else KeptAnswer(answer.answer)), change
