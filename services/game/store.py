"""What every way of changing a table shares (`TableStore`): the replica's parsed
states and its estimate of the database's clock, dealing, what the table does by
itself after a move, the write under the table's row lock (with the ratings of a
finished game), announcing a commit, and reading a table and its seats."""

from __future__ import annotations

import random
import secrets
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

import asyncpg
import grpc

from services.common import metrics, rating
from services.common.db import Connection, Pool
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import eventlog, statements
from .autoplay import abandoned, bot_claims
from .clockstop import CLOCK_STOP_S
from .dbclock import DbClock
from .dealrng import DealRandom
from .fanout import Fanout, LoggedEvent
from .outcomes import Committed
from .pacing import BotPace
from .parsed import ParsedStates
from .rules import serial
from .rules.actions import SYSTEM, Abandon, Deal
from .rules.engine import apply
from .rules.events import ClaimWindowOpened, EndReason, Event, GameEnded, RoundEnded
from .rules.levels import BotLevel
from .rules.rounds import final_places
from .rules.ruleset import Ruleset
from .rules.state import GameState, Phase
from .seating import SeatPlayer

SALT_BYTES = 16


def count_endings(committed: Committed) -> None:
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


def turn_deadline(
    state: GameState, bots: Sequence[int] = (), now_ms: int = 0, pace: BotPace | None = None
) -> datetime | None:
    """The `turn_deadline` column: when the table clock is next due (the turn's
    timeout, a claim window's end), or sooner when a bot is to play (`pace`)."""
    due = state.due_ms()
    if not due:
        return None
    if pace is not None and state.current in bots and state.claim_card < 0:
        due = min(due, pace.due_ms(state, bots, now_ms))
    return datetime.fromtimestamp(due / 1000, UTC)


def connected_of(row: asyncpg.Record) -> tuple[int, ...]:
    """The seats a table's row says are told connected (`presence`)."""
    return tuple(row["connected_seats"])


def timestamp(now_ms: int) -> datetime:
    return datetime.fromtimestamp(now_ms / 1000, UTC)


class TableStore:
    """The tables in PostgreSQL, and what this replica keeps of them: the base of
    `Tables`, whose moves, sweeper and creation all write through it."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        fanout: Fanout,
        *,
        rulesets: Callable[[str], Ruleset],
        allow_test_decks: bool = False,
        rng: random.Random | None = None,
        bot_pace: BotPace | None = None,
        clock_stop_s: float = CLOCK_STOP_S,
    ) -> None:
        self._pool = pool
        self._fanout = fanout
        self._rulesets = rulesets
        self._allow_test_decks = allow_test_decks
        self._bot_pace = bot_pace or BotPace()
        self._parsed = ParsedStates()
        self._db_clock = DbClock()
        self._sweep_failures: dict[uuid.UUID, int] = {}
        """Tables whose due turn failed to fire lately, and how many times in a row."""
        self._clock_stop_s = clock_stop_s
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

    def _deal(self, state: GameState, order: Sequence[int] | None = None) -> Deal:
        if order is None:
            cards = list(state.ruleset.deck.ids())
            self._rng.shuffle(cards)
            order = cards
        # The salt is always secret and cryptographic, even for a test deck: it is
        # what keeps the order from being guessed from the commitment.
        return Deal(tuple(order), self._rng.getrandbits(63), secrets.token_bytes(SALT_BYTES))

    def _read(self, table_id: uuid.UUID, row: asyncpg.Record) -> GameState:
        """The state a row read from the database holds (at the row's version)."""
        return self._parsed.loads(
            table_id, row["state"], row["version"], row["last_seq"], connected_of(row)
        )

    def _followed(
        self,
        state: GameState,
        events: list[Event],
        now_ms: int,
        *,
        bots: Sequence[int],
        level: BotLevel,
    ) -> tuple[GameState, list[Event]]:
        """The next round's deal when a move ended a round; the bot seats' claims
        when a move opened a claim window; the game's end when the move took the
        last person out and only bots play on. In the move's own commit."""
        if abandoned(state, events, bots):
            state, more = apply(state, SYSTEM, Abandon(), now_ms)
            return state, events + more
        if state.phase == Phase.DEAL:
            state, more = apply(state, SYSTEM, self._deal(state), now_ms)
            events = events + more
        if bots and any(isinstance(e, ClaimWindowOpened) for e in events):
            state, more = bot_claims(state, bots, now_ms, level)
            events = events + more
        return state, events

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
        last_seq = row["last_seq"] + len(events)
        seqs = list(range(row["last_seq"] + 1, last_seq + 1))
        data = serial.dumps(state)
        if over:
            self._parsed.forget(table_id)
        else:
            # Kept before the commit: bytes that are never committed are never read back.
            self._parsed.keep(table_id, data, state)
        # One statement, one round trip: the new state and the events it caused.
        await con.execute(
            statements.WRITE_LOCKED,
            table_id,
            data,
            version,
            last_seq,
            turn_deadline(state, row["bot_seats"], now_ms, self._bot_pace),
            "finished" if over else "active",
            seqs,
            [eventlog.kind_of(e) for e in events],
            [eventlog.encode(e) for e in events],
            timestamp(now_ms),
            eventlog.eliminated(events),
        )
        logged = tuple(zip(seqs, events, strict=True))
        return Committed(
            table_id, version, last_seq, state, seat, now_ms, logged, connected=connected_of(row)
        )

    async def _rate(self, con: Connection, table_id: uuid.UUID, state: GameState) -> None:
        """Update the ratings of the table's players in the same commit. A table with
        bots is a training table: it rates nobody (bots have no rating to win from);
        nor does a game its operators ended (`EndTable`): nobody won it."""
        if state.end_reason == EndReason.ENDED_BY_OPERATOR:
            return
        seats = await self.seats(con, table_id)
        humans = [s for s, p in sorted(seats.items()) if not p.is_bot]
        if len(humans) < 2 or len(humans) < len(seats):
            return
        ids = [seats[s].player_id for s in humans]
        rows = await con.fetch(statements.PLAYER_RATINGS, ids)
        known = {r["id"]: r["rating"] for r in rows}
        if len(known) != len(ids):
            return
        place = final_places(state)
        new = rating.updated([known[i] for i in ids], [place[s] for s in humans])
        await con.executemany(statements.SET_RATING, list(zip(ids, new, strict=True)))

    def _published(self, committed: Committed) -> None:
        """Announce a commit: this replica's watchers now, the others by NOTIFY.
        A commit that logged no event (the engine always says what happened, but
        a state change without news must not be announced as one) has nothing to say."""
        if not committed.events:
            return
        at = timestamp(committed.now_ms)
        self._fanout.published(
            committed.table_id,
            [LoggedEvent(seq, committed.version, event, at) for seq, event in committed.events],
        )

    async def load(
        self, table_id: uuid.UUID, player_id: str
    ) -> tuple[Committed, dict[int, SeatPlayer]]:
        """The table as it is now, for ``player_id`` (a spectator when not seated)."""
        async with self._pool.acquire() as con:
            row = await self._clocked(con, statements.LOAD, table_id)
            if row is None:
                raise Refusal(
                    grpc.StatusCode.NOT_FOUND,
                    ServiceReason.TABLE_NOT_FOUND,
                    "There is no such table.",
                )
            seats = await self.seats(con, table_id)
        seat = next((s for s, p in seats.items() if p.player_id == player_id), None)
        state = self._read(table_id, row)
        self._parsed.seat(table_id, [seats[s] for s in sorted(seats)], row["bot_seats"])
        return Committed(
            table_id,
            row["version"],
            row["last_seq"],
            state,
            seat,
            row["now_ms"],
            (),
            connected=connected_of(row),
        ), seats

    async def seats(self, con: Connection | Pool, table_id: uuid.UUID) -> dict[int, SeatPlayer]:
        rows = await con.fetch(statements.SEATS, table_id)
        return {
            r["seat"]: SeatPlayer(
                r["player_id"],
                r["display_name"],
                r["is_bot"],
                BotLevel(r["bot_level"]) if r["is_bot"] else None,
            )
            for r in rows
        }
