"""A player's move on a table (`TableMoves.act`), in one or two round trips:

1. Read the table row (and, in the same query, its seats and the stored
   answer of a known `request_id`), then apply the engine in memory. A replica
   that knows the table's state at its current version (it wrote or read it
   last) skips the read and judges the move from that state, on its estimate
   of the database's clock (`DbClock`).
2. Commit it in one statement: the state and version (only if the version is
   still the one judged from: compare-and-set), the events it caused and the
   request's answer. If another move got there first, or the request was
   answered already, nothing is written and the action starts again from the
   read; the engine then judges it against the stored state. So does a move
   the known state refuses: the stored one may differ.

Only then is the action answered and announced (`Fanout.published`: this
replica's watchers at once, other replicas by a coalesced NOTIFY). The rare
actions that touch other rows (leaving, or ending the game, which updates
ratings) run as one transaction under the table's row lock, as the sweeper's
timeouts and bot turns do; the version makes the two ways exclusive.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg
import grpc
import structlog
from google.protobuf.message import Message

from services.common import metrics
from services.common.db import Connection
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import eventlog, statements
from .outcomes import Committed, Responder, refusal_of
from .parsed import Known
from .rules import serial
from .rules.actions import SYSTEM, Action, Leave
from .rules.engine import apply
from .rules.errors import Reason, RuleError
from .rules.events import Event
from .rules.levels import BotLevel
from .rules.state import GameState, Phase
from .seating import SeatPlayer, bot_level
from .store import TableStore, connected_of, count_endings, timestamp, turn_deadline

CAS_ATTEMPTS = 8
"""Reads and retries of one action that keeps losing races (in play, at most one or two)."""


log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class _Move:
    """One player's action as `Tables.act` was asked for it, through every attempt."""

    table_id: uuid.UUID
    player_id: str
    action: Action
    respond: Responder
    request_id: str
    """The player's id for this request, whatever the call, or empty."""
    expected_version: int | None
    digest: bytes | None
    """Of what the request asked (`request_digest`), kept with its answer."""


def _seated(row: asyncpg.Record) -> tuple[SeatPlayer, ...]:
    """The seats `statements.READ` found, in seat order."""
    if row["players"] is None:
        return ()
    level = BotLevel(row["bot_level"])
    return tuple(
        SeatPlayer(p, n, b, level if b else None)
        for p, n, b in zip(row["players"], row["names"], row["bots"], strict=True)
    )


def request_digest(request: Message) -> bytes:
    """What a request asked, but its id: the same id must always ask the same, with
    the same call (two calls' requests can hold the same bytes)."""
    asked = type(request)()
    asked.CopyFrom(request)
    asked.ClearField("request_id")
    digest = hashlib.blake2b(request.DESCRIPTOR.full_name.encode(), digest_size=16)
    digest.update(b"\0")
    digest.update(asked.SerializeToString(deterministic=True))
    return digest.digest()


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


class TableMoves(TableStore):
    """A player's move: judged from the state this replica knows and committed by
    compare-and-set, or read and judged again, or written under the row lock."""

    async def act(
        self,
        table_id: uuid.UUID,
        player_id: str,
        action: Action,
        respond: Responder,
        *,
        request_id: str = "",
        expected_version: int | None = None,
        digest: bytes | None = None,
    ) -> Message | bytes:
        """Apply one player's action. The answer is ``respond``'s message, committed
        with the action; a replayed ``request_id`` gets the first answer's bytes,
        unless its ``digest`` (`request_digest`) differs: then REQUEST_ID_REUSED."""
        kind = type(action).__name__
        started = time.perf_counter()
        move = _Move(table_id, player_id, action, respond, request_id, expected_version, digest)
        try:
            response, committed = await self._act(move)
        except Refusal as refusal:
            metrics.ACTIONS.labels(kind, refusal.reason).inc()
            log.info("action_refused", table_id=str(table_id), action=kind, reason=refusal.reason)
            raise
        metrics.DB_TRANSACTION.labels("action").observe(time.perf_counter() - started)
        metrics.ACTIONS.labels(kind, "applied" if committed else "replayed").inc()
        if committed is not None:
            log.debug(
                "action_applied", table_id=str(table_id), action=kind, version=committed.version
            )
            count_endings(committed)
        return response

    async def _act(self, move: _Move) -> tuple[Message | bytes, Committed | None]:
        async with self._pool.acquire() as con:
            outcome = await self._from_known(con, move)
            tries = 0
            while outcome is None and tries < CAS_ATTEMPTS:
                outcome = await self._attempt(con, move)
                tries += 1
            if outcome is not None:
                if outcome[1] is not None:
                    # Announced before the connection goes back: a cancel while it
                    # does must not leave a committed move unannounced.
                    self._published(outcome[1])
                return outcome
        raise Refusal(
            grpc.StatusCode.ABORTED,
            ServiceReason.CONFLICT,
            "Another move got there first: try again.",
        )

    async def _from_known(
        self, con: Connection, move: _Move
    ) -> tuple[Message | bytes, Committed | None] | None:
        """One round trip: the move judged from the state this replica knows the
        table to be at, committed only if it still is. None when it is not known,
        or the move needs the stored state (a refusal, a retried request, a move
        another replica got in first, the end of the game): then `_attempt` reads it."""
        if isinstance(move.action, Leave):
            return None
        known = self._parsed.known(move.table_id)
        now_ms = self._db_clock.now_ms()
        if known is None or now_ms is None:
            metrics.KNOWN_STATE_MOVES.labels("unknown").inc()
            return None
        outcome = None
        seat = next((s for s, p in enumerate(known.seats) if p.player_id == move.player_id), None)
        if seat is not None and move.expected_version in (None, known.version):
            try:
                state, events = self._judged(
                    known.state,
                    seat,
                    move.action,
                    now_ms,
                    bots=known.bot_seats,
                    level=bot_level(known.seats),
                )
            except Refusal:
                pass  # judged again from the stored state, which may differ
            else:
                if state.phase != Phase.GAME_OVER:
                    outcome = await self._commit(con, move, known, seat, state, events, now_ms)
        metrics.KNOWN_STATE_MOVES.labels("committed" if outcome else "read").inc()
        return outcome

    async def _attempt(
        self, con: Connection, move: _Move
    ) -> tuple[Message | bytes, Committed | None] | None:
        """One read and one compare-and-set; None when another write got there first."""
        table_id, player_id, request_id = move.table_id, move.player_id, move.request_id
        row = await self._clocked(
            con,
            statements.READ,
            table_id,
            player_id,
            request_id,
            f"{type(move.action).__name__}:{request_id}" if request_id else "",
        )
        if row is None:
            raise Refusal(
                grpc.StatusCode.NOT_FOUND, ServiceReason.TABLE_NOT_FOUND, "There is no such table."
            )
        if row["response"] is not None or row["error"] is not None:
            # A row kept under the older form of the id was kept for this very call,
            # with a digest of another formula: the id alone makes it this request's.
            checked = row["kept_as"] == request_id and row["digest"] is not None
            if checked and row["digest"] != move.digest:
                raise _reused()
            if row["error"] is not None:
                raise Refusal.from_json(row["error"])
            return bytes(row["response"]), None
        seats = _seated(row)
        seat = next((s for s, p in enumerate(seats) if p.player_id == player_id), None)
        if seat is None:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                Reason.NOT_SEATED,
                "You have no seat at this table.",
            )
        try:
            if move.expected_version not in (None, row["version"]):
                raise _stale()
            before = self._read(table_id, row)
            self._parsed.seat(table_id, seats, row["bot_seats"])
            state, events = self._judged(
                before,
                seat,
                move.action,
                row["now_ms"],
                bots=row["bot_seats"],
                level=bot_level(seats),
            )
        except Refusal as refusal:
            if not request_id or row["status"] != "active":
                raise  # a finished table cannot move on: nothing to keep
            # Kept, so a retry gets this refusal rather than a second chance once
            # the table has moved on; unless a retry's answer is already kept.
            if await con.fetchval(
                statements.REMEMBER_REFUSAL,
                table_id,
                player_id,
                request_id,
                refusal.to_json(),
                move.digest,
            ):
                raise
            return None
        if isinstance(move.action, Leave) or state.phase == Phase.GAME_OVER:
            # Other rows change too (the seat, the players' ratings): under the lock.
            return await self._act_locked(con, move, seats, seat, row["version"])
        read = Known(
            before,
            row["version"],
            row["last_seq"],
            seats,
            tuple(row["bot_seats"]),
            connected_of(row),
        )
        return await self._commit(con, move, read, seat, state, events, row["now_ms"])

    async def _commit(
        self,
        con: Connection,
        move: _Move,
        before: Known,
        seat: int,
        state: GameState,
        events: list[Event],
        now_ms: int,
    ) -> tuple[Message, Committed] | None:
        """Compare-and-set from ``before``'s version: the new state, its events and
        the answer, in one statement. None if the table is no longer at that version,
        or the request was answered meanwhile."""
        table_id, request_id = move.table_id, move.request_id
        version = before.version + 1
        last_seq = before.last_seq + len(events)
        seqs = list(range(before.last_seq + 1, last_seq + 1))
        committed = Committed(
            table_id,
            version,
            last_seq,
            state,
            seat,
            now_ms,
            tuple(zip(seqs, events, strict=True)),
            before.seats,
            before.connected,
        )
        response = move.respond(committed)
        data = serial.dumps(state)
        try:
            row = await self._clocked(
                con,
                statements.COMPARE_AND_SET,
                table_id,
                data,
                version,
                last_seq,
                turn_deadline(state, before.bot_seats, now_ms, self._bot_pace),
                timestamp(now_ms),
                seqs,
                [eventlog.kind_of(e) for e in events],
                [eventlog.encode(e) for e in events],
                move.player_id,
                request_id,
                response.SerializeToString() if request_id else None,
                move.digest,
                eventlog.eliminated(events),
            )
        except asyncpg.UniqueViolationError:
            return None  # a retry of this very request was answered first: replay it
        assert row is not None  # one row, always
        if not row["moved"]:
            return None
        self._parsed.keep(table_id, data, state, version, last_seq, before.connected)
        return response, committed

    def _judged(
        self,
        state: GameState,
        seat: int | None,
        action: Action,
        now_ms: int,
        *,
        bots: Sequence[int],
        level: BotLevel,
    ) -> tuple[GameState, list[Event]]:
        """The engine's move on ``state``, then what the table does by itself after it."""
        try:
            state, events = apply(state, SYSTEM if seat is None else seat, action, now_ms)
        except RuleError as error:
            raise refusal_of(error) from None
        return self._followed(state, events, now_ms, bots=bots, level=level)

    async def _act_locked(
        self,
        con: Connection,
        move: _Move,
        seats: tuple[SeatPlayer, ...],
        seat: int,
        version_read: int,
    ) -> tuple[Message | bytes, Committed | None] | None:
        table_id, action, request_id = move.table_id, move.action, move.request_id
        async with con.transaction():
            row = await con.fetchrow(statements.LOCK, table_id)
            if row is None or row["version"] != version_read:
                return None  # moved since the read: judge the action again
            state, events = self._judged(
                self._read(table_id, row),
                seat,
                action,
                row["now_ms"],
                bots=row["bot_seats"],
                level=bot_level(seats),
            )
            if isinstance(action, Leave):
                await con.execute(statements.LEAVE_SEAT, table_id, seat)
            committed = dataclasses.replace(
                await self._write(con, table_id, row, state, events, seat), seats=seats
            )
            response = move.respond(committed)
            if request_id:
                await con.execute(
                    statements.REMEMBER_ANSWER,
                    table_id,
                    move.player_id,
                    request_id,
                    response.SerializeToString(),
                    move.digest,
                )
        self._parsed.committed(
            table_id, state, committed.version, committed.last_seq, committed.connected
        )
        return response, committed
