"""The sweeper's part of the tables (`TableSweeper`): fire the due turns, a bot's
move or a timeout, exactly once across replicas, and put off a table whose turn
cannot be fired so it never holds up the others. The server's sweep loop asks
`due` how many are due and drains them with `sweep_once`. Its beat loop marks
the turns' clock (`beat`): a turn in play while nobody could reach the service
gets its time back before it may time out (`clockstop`)."""

from __future__ import annotations

import contextlib
import enum
from datetime import datetime

import asyncpg
import structlog

from services.common import metrics
from services.common.db import Connection
from services.common.errors import DB_ERRORS

from . import statements
from .autoplay import TURN_ACTIONS, bot_turn
from .clockstop import BEAT_TIMEOUT_S
from .outcomes import Committed
from .rules.actions import SYSTEM, Resume, Timeout
from .rules.engine import apply
from .rules.errors import RuleError
from .rules.events import Discarded, Event, TurnPassed
from .rules.levels import BotLevel
from .store import TableStore, count_endings, turn_deadline

SWEEP_RETRY_S = 1.0
SWEEP_RETRY_MAX_S = 300.0
"""A table whose due turn keeps failing to fire is retried after 1 s, 2 s, 4 s...
and then every 5 minutes: each failure logs an error, and the table never blocks
the others' timeouts meanwhile."""
SWEEP_FAILURES_KEPT = 1024
"""Failing tables whose count of failures a replica remembers (the oldest go)."""


class Fired(enum.Enum):
    """What a claimed due turn was."""

    RESUME = "resume"
    BOT = "bot"
    """A bot's whole turn."""
    BOT_ACTION = "bot_action"
    """One action of a bot that plays at a person's pace (`pacing`)."""
    TIMEOUT = "timeout"
    CLAIM_WINDOW = "claim_window"
    """A `contract` claim window's end, the turn going on."""


log = structlog.get_logger(__name__)
_BUSY = (asyncpg.SerializationError, asyncpg.DeadlockDetectedError)
"""A conflict with another transaction: the next sweep tries the table again."""


def _table_fault(error: Exception) -> bool:
    """Whether an error firing a table's turn is that table's own: anything but
    the database failing or busy (an outage, a conflict, a lock it waited too long
    for), which the sweeper waits out. What PostgreSQL refuses for this table's
    rows is the table's: waited out, it would come first in every sweep, for ever."""
    if isinstance(error, asyncpg.InterfaceError) and isinstance(error, ValueError):
        return True  # a value the driver could not send (asyncpg's client DataError)
    return not isinstance(error, (*DB_ERRORS, *_BUSY))


def _turn_over(events: list[Event]) -> bool:
    """Whether a `Timeout` ended the turn (not only a claim window)."""
    return any(
        isinstance(e, TurnPassed) or (isinstance(e, Discarded) and e.automatic) for e in events
    )


class TableSweeper(TableStore):
    """The due turns of every table, fired by whichever replica claims each first."""

    async def beat(self, con: Connection) -> datetime | None:
        """Mark, over ``con``, that this replica reached the database. The first mark
        after a gap records it as a stop of the turns' clock, and says when it
        began: every turn then in play is to be made due at once (`rearm`)."""
        row = await con.fetchrow(statements.BEAT, self._clock_stop_s, timeout=BEAT_TIMEOUT_S)
        assert row is not None  # the clock's one row, always
        if not row["new"]:
            return None
        log.warning("clock_stopped", stopped_s=(row["restarted_ms"] - row["stopped_ms"]) / 1000)
        stopped_at: datetime = row["stopped_at"]
        return stopped_at

    async def rearm(self, stopped_at: datetime) -> int:
        """Make every turn in play at ``stopped_at`` due now, for `sweep_once` to
        give it its time back; how many. A table locked meanwhile is skipped: it
        gets its time back when it falls due."""
        done = await self._pool.execute(statements.REARM, stopped_at)
        return int(done.split()[-1])

    async def due(self, most: int) -> int:
        """How many turns are due now, counting at most ``most``: one indexed read,
        outside a transaction."""
        due: int = await self._pool.fetchval(statements.COUNT_DUE, most)
        return due

    async def sweep_once(self) -> Committed | None:
        """Fire the oldest due turn, if any: its time given back after a stop of
        the clock, a bot's move, or a timeout (of the turn or of a claim window).
        Exactly once across replicas: the row is claimed with SKIP LOCKED and the
        deadline moves in the same commit. None when nothing fired.

        A table whose turn cannot be fired (a state that does not load, a bot or
        engine fault) is put off with a growing delay and logged, so it never holds
        up the other tables' timeouts: being the oldest due row, every replica
        would otherwise claim it first, and fail, forever."""
        async with self._pool.acquire() as con:
            claimed: asyncpg.Record | None = None
            try:
                async with con.transaction():
                    claimed = row = await con.fetchrow(statements.CLAIM_DUE, self._clock_stop_s)
                    if row is None:
                        return None
                    fired = await self._fire(con, row)
            except Exception as error:
                if claimed is None or not _table_fault(error):
                    raise
                await self._put_off(con, claimed, error)
                return None
            if fired is not None:
                # Announced before the connection goes back, as a player's move is.
                self._published(fired[0])
        if fired is None:
            return None
        committed, what, late_ms = fired
        self._sweep_failures.pop(committed.table_id, None)
        self._parsed.committed(
            committed.table_id,
            committed.state,
            committed.version,
            committed.last_seq,
            committed.connected,
        )
        if what == Fired.TIMEOUT:
            metrics.TIMEOUTS_FIRED.inc()
            metrics.TIMEOUT_LATENESS.observe(late_ms / 1000)
        elif what == Fired.RESUME:
            metrics.TURNS_RESUMED.inc()
        elif what == Fired.CLAIM_WINDOW:
            metrics.ACTIONS.labels("ClaimWindowClosed", "applied").inc()
        elif what == Fired.BOT_ACTION:
            metrics.ACTIONS.labels("BotAction", "applied").inc()
        else:
            metrics.ACTIONS.labels("BotTurn", "applied").inc()
        count_endings(committed)
        return committed

    async def _fire(
        self, con: Connection, row: asyncpg.Record
    ) -> tuple[Committed, Fired, int] | None:
        """The claimed table's resume, bot move or timeout, written under its lock:
        what was committed, what fired, and how late (ms). None if not due."""
        state = self._read(row["id"], row)
        now_ms = row["now_ms"]
        due = state.due_ms()
        events: list[Event] = []
        fired = Fired.BOT
        # A turn in play while nobody could reach the service gets its time back
        # first, the stop before the last one first (the engine refuses a turn
        # begun since, or given its time back already).
        stops = row["stops"]
        for stopped, restarted in ((stops[0], stops[1]), (stops[2], stops[3])):
            if stopped is None:
                continue
            with contextlib.suppress(RuleError):
                state, more = apply(state, SYSTEM, Resume(stopped, restarted), now_ms)
                events += more
                fired = Fired.RESUME
        bots, level = row["bot_seats"], BotLevel(row["bot_level"])
        paced = self._bot_pace.paced(state, bots)
        # A paced bot lets a claim window that fell due close first (the clock's
        # `Timeout` below), then thinks again before its next action.
        window_over = state.claim_card >= 0 and now_ms >= state.claim_deadline_ms
        if not events and state.current in bots and not (paced and window_over):
            # At a person's pace, one action per due time: the next is due after
            # its own think time (`pacing`, written with the state by `_write`).
            most, fired = (1, Fired.BOT_ACTION) if paced else (TURN_ACTIONS, Fired.BOT)
            try:
                state, events = bot_turn(state, state.current, now_ms, level=level, most=most)
            except Exception as error:  # a bot's fault must not stall its table
                log.error(
                    "bot_turn_failed",
                    table_id=str(row["id"]),
                    seat=state.current,
                    error=repr(error),
                    exc_info=error,
                )
                # The turn is then the clock's, as an absent player's would be.
        if not events:
            try:
                state, events = apply(state, SYSTEM, Timeout(), now_ms)
                fired = Fired.TIMEOUT if _turn_over(events) else Fired.CLAIM_WINDOW
            except RuleError:
                # Not due yet (a stuck bot, or a column written ahead of the
                # state): wait for the turn's own deadline.
                await con.execute(statements.SET_DEADLINE, row["id"], turn_deadline(state))
                return None
        state, events = self._followed(state, events, now_ms, bots=bots, level=level)
        committed = await self._write(con, row["id"], row, state, events, None)
        return committed, fired, max(0, now_ms - due)

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
        await con.execute(statements.PUT_OFF, table_id, row["version"], delay_s)
