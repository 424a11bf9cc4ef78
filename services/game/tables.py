"""Tables as stateless actors over PostgreSQL.

Any replica can serve any table; what a replica keeps of a table between calls
(`ParsedStates`) only saves work, and correctness never depends on it. An
action takes one or two round trips:

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
import json
import random
import secrets
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg
import grpc
import structlog
from google.protobuf.message import Message

from services.common import metrics, rating
from services.common.db import Connection, Pool
from services.common.errors import DB_ERRORS

from . import eventlog
from .autoplay import BOT_DELAY_MS, bot_claims, bot_turn
from .dbclock import DbClock
from .dealrng import DealRandom
from .fanout import Fanout, LoggedEvent
from .parsed import Known, ParsedStates
from .rules import serial
from .rules.actions import SYSTEM, Action, Deal, Leave, Timeout
from .rules.engine import apply
from .rules.errors import Reason, RuleError
from .rules.events import ClaimWindowOpened, EndReason, Event, GameEnded, RoundEnded
from .rules.ruleset import Ruleset, TableOptions, effective_options
from .rules.state import GameState, Phase, new_game
from .seating import SeatPlayer


class Refusal(Exception):
    """A refused call: the gRPC code, a stable reason and a sentence for the player."""

    def __init__(self, code: grpc.StatusCode, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message

    def to_json(self) -> str:
        return json.dumps({"code": self.code.name, "reason": self.reason, "message": self.message})

    @classmethod
    def from_json(cls, text: str) -> Refusal:
        doc = json.loads(text)
        return cls(grpc.StatusCode[doc["code"]], doc["reason"], doc["message"])


_CODES = {
    Reason.NOT_SEATED: grpc.StatusCode.PERMISSION_DENIED,
    Reason.CARD_UNKNOWN: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.CARD_DUPLICATED: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.ACTION_UNKNOWN: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.DECK_INVALID: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.MELD_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    # A lost race with the table, as a stale version is: look again, then decide.
    Reason.CLAIM_CARD_CHANGED: grpc.StatusCode.ABORTED,
}


def refusal_of(error: RuleError) -> Refusal:
    code = _CODES.get(error.reason, grpc.StatusCode.FAILED_PRECONDITION)
    return Refusal(code, error.reason.value, error.message)


@dataclass(frozen=True, slots=True)
class Committed:
    """What one committed transaction left: the new state, seen by ``seat``."""

    table_id: uuid.UUID
    version: int
    last_seq: int
    state: GameState
    seat: int | None
    now_ms: int
    events: tuple[tuple[int, Event], ...]
    seats: tuple[SeatPlayer, ...] = ()
    """Who sits where (index = seat), when the transaction read it."""


Responder = Callable[[Committed], Message]


@dataclass(frozen=True, slots=True)
class _Move:
    """One player's action as `Tables.act` was asked for it, through every attempt."""

    table_id: uuid.UUID
    player_id: str
    action: Action
    respond: Responder
    request_id: str
    """Scoped by the kind of move ("Discard:<id>"), or empty."""
    expected_version: int | None


_LOCK = (
    "SELECT state, version, last_seq, bot_seats,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms"
    " FROM tables WHERE id = $1 FOR UPDATE"
)
DB_NOW = "(SELECT clock_timestamp())"
"""The database's clock, read once per statement: a bare clock_timestamp() (volatile)
cannot bound an index scan, and a sweep would read every active table's deadline."""

COUNT_DUE = (
    "SELECT count(*)::int FROM (SELECT 1 FROM tables WHERE status = 'active'"
    f" AND turn_deadline <= {DB_NOW} LIMIT $1) AS d"
)
"""The sweeper's probe: how many turns are due (at most $1)."""

CLAIM_DUE = (
    "SELECT id, state, version, last_seq, bot_seats,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms"
    f" FROM tables WHERE status = 'active' AND turn_deadline <= {DB_NOW}"
    " ORDER BY turn_deadline LIMIT 1 FOR UPDATE SKIP LOCKED"
)
"""The oldest due turn, claimed (others' claims are skipped)."""

READ = (
    "SELECT t.state, t.version, t.last_seq, t.bot_seats,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms,"
    " r.response, r.error, s.players, s.names, s.bots"
    " FROM tables t LEFT JOIN action_requests r"
    " ON r.table_id = t.id AND r.player_id = $2 AND r.request_id = $3"
    " LEFT JOIN LATERAL (SELECT array_agg(player_id ORDER BY seat) AS players,"
    " array_agg(display_name ORDER BY seat) AS names, array_agg(is_bot ORDER BY seat) AS bots"
    " FROM table_seats WHERE table_id = t.id) AS s ON true"
    " WHERE t.id = $1"
)
COMPARE_AND_SET = (
    "WITH moved AS (UPDATE tables SET state = $2, version = $3, last_seq = $4,"
    " turn_deadline = $5, updated_at = now() WHERE id = $1 AND version = $3 - 1"
    " AND status = 'active' RETURNING id),"
    " logged AS (INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
    " SELECT $1, s, $3, k, p, $6 FROM moved,"
    " unnest($7::bigint[], $8::text[], $9::bytea[]) AS e(s, k, p)),"
    " answered AS (INSERT INTO action_requests (table_id, player_id, request_id, response)"
    " SELECT $1, $10, $11, $12 FROM moved WHERE $11 <> '')"
    " SELECT count(*) AS moved,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms FROM moved"
)
_CLOCK = (
    "SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms,"
    " t.version, t.last_seq FROM (SELECT 1) AS one LEFT JOIN tables t ON t.id = $1"
)
_CREATE = (
    "WITH made AS (INSERT INTO tables (id, ruleset, options, state, version, last_seq,"
    " turn_deadline, bot_seats) VALUES ($1, $2, $3::jsonb, $4, 1, $6, $5, $7)"
    " ON CONFLICT (id) DO NOTHING RETURNING id),"
    " seated AS (INSERT INTO table_seats (table_id, seat, player_id, display_name, is_bot)"
    " SELECT $1, s - 1, p, n, b FROM made,"
    " unnest($8::text[], $9::text[], $10::boolean[]) WITH ORDINALITY AS x(p, n, b, s)),"
    " logged AS (INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
    " SELECT $1, s, 1, k, p, $14 FROM made,"
    " unnest($11::bigint[], $12::text[], $13::bytea[]) AS e(s, k, p))"
    " SELECT count(*) AS made,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms FROM made"
)
_MADE = (
    "SELECT ruleset, options::text AS options, (SELECT max(seq) FROM table_events"
    " WHERE table_id = $1 AND version = 1) AS first_seq FROM tables WHERE id = $1"
)
"""What a create stored, to tell a retry of it from another table under its id."""
_REMEMBER_REFUSAL = (
    "INSERT INTO action_requests (table_id, player_id, request_id, error)"
    " VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING RETURNING true"
)
SWEEP_RETRY_S = 1.0
SWEEP_RETRY_MAX_S = 300.0
"""A table whose due turn keeps failing to fire is retried after 1 s, 2 s, 4 s...
and then every 5 minutes: each failure logs an error, and the table never blocks
the others' timeouts meanwhile."""
SWEEP_FAILURES_KEPT = 1024
"""Failing tables whose count of failures a replica remembers (the oldest go)."""
CAS_ATTEMPTS = 8
"""Reads and retries of one action that keeps losing races (in play, at most one or two)."""


log = structlog.get_logger(__name__)
SALT_BYTES = 16


def _count_endings(committed: Committed) -> None:
    """Metrics of what a committed transaction ended (counted after the commit)."""
    state = committed.state
    ruleset = state.ruleset.name
    capped = state.turn >= state.options.turn_cap
    for _, event in committed.events:
        if isinstance(event, RoundEnded) and (
            event.reason == EndReason.TURN_CAP or (event.reason == EndReason.BLOCKED and capped)
        ):
            metrics.TURN_CAP_ENDINGS.labels(ruleset).inc()
        elif isinstance(event, GameEnded):
            metrics.GAMES_FINISHED.labels(ruleset, event.reason.value).inc()


def _deadline(
    state: GameState, bots: Sequence[int] = (), now_ms: int = 0, bot_delay_ms: int = 0
) -> datetime | None:
    """The `turn_deadline` column: when the table clock is next due (the turn's
    timeout, a claim window's end), or sooner when a bot is to play."""
    due = state.due_ms()
    if not due:
        return None
    if state.current in bots and state.claim_card < 0:
        due = min(due, now_ms + bot_delay_ms)
    return datetime.fromtimestamp(due / 1000, UTC)


def _at(now_ms: int) -> datetime:
    return datetime.fromtimestamp(now_ms / 1000, UTC)


def _seated(row: asyncpg.Record) -> tuple[SeatPlayer, ...]:
    """The seats `READ` found, in seat order."""
    if row["players"] is None:
        return ()
    return tuple(
        SeatPlayer(p, n, b)
        for p, n, b in zip(row["players"], row["names"], row["bots"], strict=True)
    )


def _table_fault(error: Exception) -> bool:
    """Whether an error firing a table's turn is that table's own: anything but
    the database failing (an outage, a conflict), which the sweeper waits out."""
    if isinstance(error, asyncpg.DataError | asyncpg.IntegrityConstraintViolationError):
        return True  # what the table's state asked the database to store
    return not isinstance(error, (asyncpg.PostgresError, *DB_ERRORS))


def _stale() -> Refusal:
    return Refusal(
        grpc.StatusCode.ABORTED,
        "VERSION_STALE",
        "The table has moved on since you looked: refresh and try again.",
    )


class Tables:
    def __init__(
        self,
        pool: asyncpg.Pool,
        fanout: Fanout,
        *,
        rulesets: Callable[[str], Ruleset],
        allow_test_decks: bool = False,
        rng: random.Random | None = None,
        bot_delay_ms: int = BOT_DELAY_MS,
    ) -> None:
        self._pool = pool
        self._fanout = fanout
        self._rulesets = rulesets
        self._allow_test_decks = allow_test_decks
        self._bot_delay_ms = bot_delay_ms
        self._parsed = ParsedStates()
        self._db_clock = DbClock()
        self._sweep_failures: dict[uuid.UUID, int] = {}
        """Tables whose due turn failed to fire lately, and how many times in a row."""
        # Production deals come from the OS's cryptographic source.
        self._rng = rng or DealRandom()

    async def _clocked(self, con: Connection, query: str, *args: object) -> asyncpg.Record | None:
        """`fetchrow` of a query whose row reads the database's clock (`now_ms`):
        each such row is a sample for this replica's estimate of that clock."""
        sent = time.monotonic()
        row = await con.fetchrow(query, *args)
        if row is not None:
            self._db_clock.saw(row["now_ms"], sent, time.monotonic())
        return row

    async def _clock(self, con: Connection, table_id: uuid.UUID) -> asyncpg.Record:
        """The database's clock, and the table's version and last seq if it exists."""
        row = await self._clocked(con, _CLOCK, table_id)
        assert row is not None  # one row, always
        return row

    def _deal(self, state: GameState, order: Sequence[int] | None = None) -> Deal:
        if order is None:
            cards = list(state.ruleset.deck.ids())
            self._rng.shuffle(cards)
            order = cards
        # The salt is always secret and cryptographic, even for a test deck: it is
        # what keeps the order from being guessed from the commitment.
        return Deal(tuple(order), self._rng.getrandbits(63), secrets.token_bytes(SALT_BYTES))

    async def create(
        self,
        ruleset_name: str,
        options: TableOptions,
        players: Sequence[SeatPlayer],
        *,
        deck_order: Sequence[int] | None = None,
        table_id: uuid.UUID | None = None,
    ) -> Committed:
        try:
            ruleset = self._rulesets(ruleset_name)
        except KeyError as error:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT, "RULESET_UNKNOWN", str(error.args[0])
            ) from None
        if not 2 <= len(players) <= 4:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                "SEATS_INVALID",
                "A table seats 2, 3 or 4 players.",
            )
        if len({p.player_id for p in players}) != len(players):
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                "SEATS_INVALID",
                "A player can only take one seat.",
            )
        try:
            options = effective_options(ruleset, options)
        except ValueError as error:
            raise Refusal(grpc.StatusCode.INVALID_ARGUMENT, "OPTIONS_INVALID", str(error)) from None
        if deck_order and not self._allow_test_decks:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                "TEST_DECK_REFUSED",
                "This server does not accept an explicit deck order.",
            )
        table_id = table_id or uuid.uuid4()
        bots = [seat for seat, p in enumerate(players) if p.is_bot]
        state = new_game(ruleset, len(players), options)
        async with self._pool.acquire() as con:
            # The insert finds out whether the table exists: the clock is read
            # first only when this replica has not seen it lately.
            now_ms = self._db_clock.now_ms()
            clock = None
            if now_ms is None:
                clock = await self._clock(con, table_id)
                now_ms = int(clock["now_ms"])
            if clock is None or clock["version"] is None:
                try:
                    state, events = apply(
                        state, SYSTEM, self._deal(state, deck_order or None), now_ms
                    )
                except RuleError as error:
                    raise refusal_of(error) from None
                seqs = list(range(1, len(events) + 1))
                data = serial.dumps(state)
                self._parsed.keep(table_id, data, state)
                # One statement: the table, its seats and its first events.
                created = await self._clocked(
                    con,
                    _CREATE,
                    table_id,
                    ruleset.name,
                    json.dumps(options_json(options)),
                    data,
                    _deadline(state, bots, now_ms, self._bot_delay_ms),
                    seqs[-1],
                    bots,
                    [p.player_id for p in players],
                    [p.display_name for p in players],
                    [p.is_bot for p in players],
                    seqs,
                    [eventlog.kind_of(e) for e in events],
                    [eventlog.encode(e) for e in events],
                    _at(now_ms),
                )
                assert created is not None  # one row, always
                if created["made"]:
                    self._parsed.committed(table_id, state, 1, seqs[-1])
                    self._parsed.seat(table_id, players, bots)
                    committed = Committed(
                        table_id,
                        1,
                        seqs[-1],
                        state,
                        None,
                        now_ms,
                        tuple(zip(seqs, events, strict=True)),
                        tuple(players),
                    )
                    self._published(committed)
                    return committed
            # Made before: a retried create (the caller chose the id, or sent the same
            # request id), answered as the first time if it asks for the same table.
            made = await con.fetchrow(_MADE, table_id)
            seated = await self.seats(con, table_id)
            if (
                made is None
                or made["ruleset"] != ruleset.name
                or json.loads(made["options"]) != json.loads(json.dumps(options_json(options)))
                or [seated[s] for s in sorted(seated)] != list(players)
            ):
                raise Refusal(
                    grpc.StatusCode.ALREADY_EXISTS,
                    "TABLE_EXISTS",
                    "A different table already has this id.",
                )
            return Committed(table_id, 1, made["first_seq"] or 0, state, None, 0, ())

    async def act(
        self,
        table_id: uuid.UUID,
        player_id: str,
        action: Action,
        respond: Responder,
        *,
        request_id: str = "",
        expected_version: int | None = None,
    ) -> Message | bytes:
        """Apply one player's action. The answer is ``respond``'s message, committed
        with the action; a replayed ``request_id`` gets the first answer's bytes."""
        kind = type(action).__name__
        if request_id:
            # Scoped by the call: an id reused for another kind of move is a new request.
            request_id = f"{kind}:{request_id}"
        started = time.perf_counter()
        move = _Move(table_id, player_id, action, respond, request_id, expected_version)
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
            self._published(committed)
            _count_endings(committed)
        return response

    async def _act(self, move: _Move) -> tuple[Message | bytes, Committed | None]:
        async with self._pool.acquire() as con:
            outcome = await self._from_known(con, move)
            if outcome is not None:
                return outcome
            for _ in range(CAS_ATTEMPTS):
                outcome = await self._attempt(con, move)
                if outcome is not None:
                    return outcome
        raise Refusal(
            grpc.StatusCode.ABORTED, "CONFLICT", "Another move got there first: try again."
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
                    known.state, seat, move.action, now_ms, known.bot_seats
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
        row = await self._clocked(con, READ, table_id, player_id, request_id)
        if row is None:
            raise Refusal(grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND", "There is no such table.")
        if row["response"] is not None:
            return bytes(row["response"]), None
        if row["error"] is not None:
            raise Refusal.from_json(row["error"])
        seats = _seated(row)
        seat = next((s for s, p in enumerate(seats) if p.player_id == player_id), None)
        if seat is None:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED, "NOT_SEATED", "You have no seat at this table."
            )
        try:
            if move.expected_version not in (None, row["version"]):
                raise _stale()
            before = self._read(table_id, row)
            self._parsed.seat(table_id, seats, row["bot_seats"])
            state, events = self._judged(before, seat, move.action, row["now_ms"], row["bot_seats"])
        except Refusal as refusal:
            if not request_id:
                raise
            # Kept, so a retry gets this refusal rather than a second chance once
            # the table has moved on; unless a retry's answer is already kept.
            if await con.fetchval(
                _REMEMBER_REFUSAL, table_id, player_id, request_id, refusal.to_json()
            ):
                raise
            return None
        if isinstance(move.action, Leave) or state.phase == Phase.GAME_OVER:
            # Other rows change too (the seat, the players' ratings): under the lock.
            return await self._act_locked(con, move, seats, seat, row["version"])
        read = Known(before, row["version"], row["last_seq"], seats, tuple(row["bot_seats"]))
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
        seqs = list(range(before.last_seq + 1, before.last_seq + 1 + len(events)))
        committed = Committed(
            table_id,
            version,
            seqs[-1],
            state,
            seat,
            now_ms,
            tuple(zip(seqs, events, strict=True)),
            before.seats,
        )
        response = move.respond(committed)
        data = serial.dumps(state)
        try:
            row = await self._clocked(
                con,
                COMPARE_AND_SET,
                table_id,
                data,
                version,
                seqs[-1],
                _deadline(state, before.bot_seats, now_ms, self._bot_delay_ms),
                _at(now_ms),
                seqs,
                [eventlog.kind_of(e) for e in events],
                [eventlog.encode(e) for e in events],
                move.player_id,
                request_id,
                response.SerializeToString() if request_id else None,
            )
        except asyncpg.UniqueViolationError:
            return None  # a retry of this very request was answered first: replay it
        assert row is not None  # one row, always
        if not row["moved"]:
            return None
        self._parsed.keep(table_id, data, state, version, seqs[-1])
        return response, committed

    def _read(self, table_id: uuid.UUID, row: asyncpg.Record) -> GameState:
        """The state a row read from the database holds (at the row's version)."""
        return self._parsed.loads(table_id, row["state"], row["version"], row["last_seq"])

    def _judged(
        self, state: GameState, seat: int | None, action: Action, now_ms: int, bots: Sequence[int]
    ) -> tuple[GameState, list[Event]]:
        """The engine's move on ``state``, then what the table does by itself after it."""
        try:
            state, events = apply(state, SYSTEM if seat is None else seat, action, now_ms)
        except RuleError as error:
            raise refusal_of(error) from None
        return self._followed(state, events, now_ms, bots)

    def _followed(
        self, state: GameState, events: list[Event], now_ms: int, bots: Sequence[int]
    ) -> tuple[GameState, list[Event]]:
        """The next round's deal when a move ended a round; the bot seats' claims
        when a move opened a claim window. In the move's own commit."""
        if state.phase == Phase.DEAL:
            state, more = apply(state, SYSTEM, self._deal(state), now_ms)
            events = events + more
        if bots and any(isinstance(e, ClaimWindowOpened) for e in events):
            state, more = bot_claims(state, bots, now_ms)
            events = events + more
        return state, events

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
            row = await con.fetchrow(_LOCK, table_id)
            if row is None or row["version"] != version_read:
                return None  # moved since the read: judge the action again
            state, events = self._judged(
                self._read(table_id, row), seat, action, row["now_ms"], row["bot_seats"]
            )
            if isinstance(action, Leave):
                await con.execute(
                    "UPDATE table_seats SET left_at = now() WHERE table_id = $1 AND seat = $2",
                    table_id,
                    seat,
                )
            committed = dataclasses.replace(
                await self._write(con, table_id, row, state, events, seat), seats=seats
            )
            response = move.respond(committed)
            if request_id:
                await con.execute(
                    "INSERT INTO action_requests (table_id, player_id, request_id, response)"
                    " VALUES ($1, $2, $3, $4)",
                    table_id,
                    move.player_id,
                    request_id,
                    response.SerializeToString(),
                )
        self._parsed.committed(table_id, state, committed.version, committed.last_seq)
        return response, committed

    async def _write(
        self,
        con: Connection,
        table_id: uuid.UUID,
        row: asyncpg.Record,
        state: GameState,
        events: list[Event],
        seat: int | None,
    ) -> Committed:
        """Write a move under the table's row lock (``row`` is what the lock read)."""
        now_ms = row["now_ms"]
        version = row["version"] + 1
        over = state.phase == Phase.GAME_OVER
        if over:
            await self._rate(con, table_id, state)
        seqs = list(range(row["last_seq"] + 1, row["last_seq"] + 1 + len(events)))
        data = serial.dumps(state)
        if over:
            self._parsed.forget(table_id)
        else:
            # Kept before the commit: bytes that are never committed are never read back.
            self._parsed.keep(table_id, data, state)
        # One statement, one round trip: the new state and the events it caused.
        await con.execute(
            "WITH moved AS (UPDATE tables SET state = $2, version = $3, last_seq = $4,"
            " turn_deadline = $5, status = $6, updated_at = now(),"
            " finished_at = CASE WHEN $6 = 'finished' THEN now() END WHERE id = $1)"
            " INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
            " SELECT $1, s, $3, k, p, $10 FROM unnest($7::bigint[], $8::text[], $9::bytea[])"
            " AS e(s, k, p)",
            table_id,
            data,
            version,
            seqs[-1],
            _deadline(state, row["bot_seats"], now_ms, self._bot_delay_ms),
            "finished" if over else "active",
            seqs,
            [eventlog.kind_of(e) for e in events],
            [eventlog.encode(e) for e in events],
            _at(now_ms),
        )
        logged = list(zip(seqs, events, strict=True))
        return Committed(table_id, version, logged[-1][0], state, seat, now_ms, tuple(logged))

    async def _rate(self, con: Connection, table_id: uuid.UUID, state: GameState) -> None:
        """Update the ratings of the table's players in the same commit. A table with
        bots is a training table: it rates nobody (bots have no rating to win from)."""
        seats = await self.seats(con, table_id)
        humans = [s for s, p in sorted(seats.items()) if not p.is_bot]
        if len(humans) < 2 or len(humans) < len(seats):
            return
        ids = [seats[s].player_id for s in humans]
        rows = await con.fetch("SELECT id, rating FROM players WHERE id = ANY($1::text[])", ids)
        known = {r["id"]: r["rating"] for r in rows}
        if len(known) != len(ids):
            return
        order = sorted(state.playing(), key=lambda s: (s != state.winner, state.totals[s]))
        place = {s: i for i, s in enumerate(order)}
        worst = len(order)
        places = [place.get(s, worst) for s in humans]
        new = rating.updated([known[i] for i in ids], places)
        await con.executemany(
            "UPDATE players SET rating = $2 WHERE id = $1", list(zip(ids, new, strict=True))
        )

    def _published(self, committed: Committed) -> None:
        """Announce a commit: this replica's watchers now, the others by NOTIFY."""
        at = _at(committed.now_ms)
        self._fanout.published(
            committed.table_id,
            [LoggedEvent(seq, committed.version, event, at) for seq, event in committed.events],
        )

    async def due(self, most: int) -> int:
        """How many turns are due now, counting at most ``most``: one indexed read,
        outside a transaction."""
        due: int = await self._pool.fetchval(COUNT_DUE, most)
        return due

    async def sweep_once(self) -> Committed | None:
        """Fire the oldest due turn, if any: a bot's move or a timeout. Exactly once
        across replicas: the row is claimed with SKIP LOCKED and the deadline moves
        in the same commit. None when nothing fired.

        A table whose turn cannot be fired (a state that does not load, a bot or
        engine fault) is put off with a growing delay and logged, so it never holds
        up the other tables' timeouts: being the oldest due row, every replica
        would otherwise claim it first, and fail, forever."""
        async with self._pool.acquire() as con:
            claimed: asyncpg.Record | None = None
            try:
                async with con.transaction():
                    claimed = row = await con.fetchrow(CLAIM_DUE)
                    if row is None:
                        return None
                    fired = await self._fire(con, row)
            except Exception as error:
                if claimed is None or not _table_fault(error):
                    raise
                await self._put_off(con, claimed, error)
                return None
        if fired is None:
            return None
        committed, timed_out, late_ms = fired
        self._sweep_failures.pop(committed.table_id, None)
        self._parsed.committed(
            committed.table_id, committed.state, committed.version, committed.last_seq
        )
        self._published(committed)
        if timed_out:
            metrics.TIMEOUTS_FIRED.inc()
            metrics.TIMEOUT_LATENESS.observe(late_ms / 1000)
        else:
            metrics.ACTIONS.labels("BotTurn", "applied").inc()
        _count_endings(committed)
        return committed

    async def _fire(
        self, con: Connection, row: asyncpg.Record
    ) -> tuple[Committed, bool, int] | None:
        """The claimed table's bot move or timeout, written under its lock: what was
        committed, whether it was a timeout, and how late (ms). None if not due."""
        state = self._read(row["id"], row)
        now_ms = row["now_ms"]
        due = state.due_ms()
        events: list[Event] = []
        timed_out = False
        if state.current in row["bot_seats"]:
            state, events = bot_turn(state, state.current, now_ms)
        if not events:
            try:
                state, events = apply(state, SYSTEM, Timeout(), now_ms)
                timed_out = True
            except RuleError:
                # Not due yet (a stuck bot, or a column written ahead of the
                # state): wait for the turn's own deadline.
                await con.execute(
                    "UPDATE tables SET turn_deadline = $2 WHERE id = $1",
                    row["id"],
                    _deadline(state),
                )
                return None
        state, events = self._followed(state, events, now_ms, row["bot_seats"])
        committed = await self._write(con, row["id"], row, state, events, None)
        return committed, timed_out, max(0, now_ms - due)

    async def _put_off(self, con: Connection, row: asyncpg.Record, error: Exception) -> None:
        """Move a table whose due turn failed to fire out of the sweep for a while
        (1 s, then twice as long each time, up to `SWEEP_RETRY_MAX_S`)."""
        table_id = row["id"]
        failures = self._sweep_failures.pop(table_id, 0) + 1
        self._sweep_failures[table_id] = failures
        while len(self._sweep_failures) > SWEEP_FAILURES_KEPT:
            del self._sweep_failures[next(iter(self._sweep_failures))]
        delay_s = min(SWEEP_RETRY_MAX_S, SWEEP_RETRY_S * 2 ** min(failures - 1, 20))
        log.error(
            "sweep_table_failed",
            table_id=str(table_id),
            version=row["version"],
            failures=failures,
            retry_in_s=delay_s,
            error=repr(error),
            exc_info=error,
        )
        # Only if nobody moved the table meanwhile (the claim's lock is gone).
        await con.execute(
            "UPDATE tables SET turn_deadline = clock_timestamp() + make_interval(secs => $3)"
            " WHERE id = $1 AND version = $2 AND status = 'active'",
            table_id,
            row["version"],
            delay_s,
        )

    async def load(
        self, table_id: uuid.UUID, player_id: str
    ) -> tuple[Committed, dict[int, SeatPlayer]]:
        """The table as it is now, for ``player_id`` (a spectator when not seated)."""
        async with self._pool.acquire() as con:
            row = await self._clocked(
                con,
                "SELECT state, version, last_seq, bot_seats,"
                " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms"
                " FROM tables WHERE id = $1",
                table_id,
            )
            if row is None:
                raise Refusal(
                    grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND", "There is no such table."
                )
            seats = await self.seats(con, table_id)
        seat = next((s for s, p in seats.items() if p.player_id == player_id), None)
        state = self._read(table_id, row)
        self._parsed.seat(table_id, [seats[s] for s in sorted(seats)], row["bot_seats"])
        return Committed(
            table_id, row["version"], row["last_seq"], state, seat, row["now_ms"], ()
        ), seats

    async def seats(self, con: Connection | Pool, table_id: uuid.UUID) -> dict[int, SeatPlayer]:
        rows = await con.fetch(
            "SELECT seat, player_id, display_name, is_bot FROM table_seats WHERE table_id = $1",
            table_id,
        )
        return {r["seat"]: SeatPlayer(r["player_id"], r["display_name"], r["is_bot"]) for r in rows}


def options_json(options: TableOptions) -> dict[str, int]:
    """The effective options, as the matchmaker keys its queues by them."""
    return dataclasses.asdict(options)
