"""The due turns of every table (`TableSweeper`): a bot's move, a timeout, a turn's
time given back after the clock stopped (`clockstop`), each fired exactly once
across replicas and committed by the protocol of `store`. A table whose turn
cannot be fired is put off, so it never holds up the others.

`run` is the replica's sweep loop: a cheap probe (`due`) counts the due turns,
then drains claim and fire them (`sweep_once`), one table per transaction."""

from __future__ import annotations

import asyncio
import enum
import uuid

import asyncpg
import structlog

from services.common import metrics
from services.common.db import Connection
from services.common.errors import DB_ERRORS

from . import statements
from .autoplay import TURN_ACTIONS, House, bot_turn
from .clockstop import CLOCK_STOP_S, resumed
from .pacing import BotPace
from .records import Committed, Known
from .rules.actions import SYSTEM, Timeout
from .rules.engine import apply
from .rules.errors import RuleError
from .rules.events import Discarded, Event, TurnPassed
from .rules.levels import BotLevel
from .store import TableStore, turn_deadline

SWEEPERS = 3
"""Drains at once: a burst of expiring turns (many tables started together) does
not queue behind one drain's round trips."""
SWEEP_BATCH = 100
"""Due turns counted by one probe; the drains then fire that many before asking again."""
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


class TableSweeper:
    """The due turns of every table, fired by whichever replica claims each first."""

    def __init__(
        self,
        store: TableStore,
        house: House,
        *,
        bot_pace: BotPace | None = None,
        clock_stop_s: float = CLOCK_STOP_S,
    ) -> None:
        self._store = store
        self._house = house
        self._bot_pace = bot_pace or BotPace()
        self._clock_stop_s = clock_stop_s
        self._failures: dict[uuid.UUID, int] = {}
        """Tables whose due turn failed to fire lately, and how many times in a row."""

    async def run(self, interval: float) -> None:
        """Fire expired turns until cancelled; several replicas may sweep at once
        (SKIP LOCKED).

        Every ``interval`` a cheap probe (one statement, no transaction) counts
        the turns due; only then are they claimed, one table per transaction, by
        up to `SWEEPERS` drains at once. An idle replica thus costs the database
        one indexed read per interval.

        While the database is out of reach the loop backs off (up to 2 s) and logs
        the first failure and then every twentieth, not one line per poll. Any other
        failure is logged as an error and backed off the same way: the loop itself
        only ends when cancelled (a table that cannot be fired is put off by
        `sweep_once`, so it holds up no other table)."""
        failures = 0
        while True:
            try:
                due = await self.due(SWEEP_BATCH)
                fired = 0
                if due:
                    drains = min(due, SWEEPERS)
                    share = -(-due // drains)
                    drained = await asyncio.gather(
                        *(self._drain(share) for _ in range(drains)), return_exceptions=True
                    )
                    for result in drained:
                        if isinstance(result, BaseException):
                            raise result
                        fired += result
                failures = 0
            except (*DB_ERRORS, asyncpg.PostgresError) as error:
                failures += 1
                if failures % 20 == 1:
                    log.warning("sweep_failed", error=str(error), failures=failures)
                await asyncio.sleep(min(2.0, interval * 2 ** min(failures, 10)))
                continue
            except Exception:
                failures += 1
                if failures % 20 == 1:
                    log.exception("sweep_crashed", failures=failures)
                await asyncio.sleep(min(2.0, interval * 2 ** min(failures, 10)))
                continue
            if not fired:  # else more may have fallen due meanwhile
                await asyncio.sleep(interval)

    async def _drain(self, most: int) -> int:
        """Fire up to ``most`` due turns, one per transaction; how many fired."""
        fired = 0
        while fired < most and await self.sweep_once() is not None:
            fired += 1
        return fired

    async def due(self, most: int) -> int:
        """How many turns are due now, counting at most ``most``: one indexed read,
        outside a transaction."""
        due = await statements.COUNT_DUE.fetchval(self._store.pool, most=most)
        assert isinstance(due, int)
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
        async with self._store.pool.acquire() as con:
            claimed: asyncpg.Record | None = None
            try:
                async with con.transaction():
                    claimed = row = await statements.CLAIM_DUE.fetchrow(
                        con, clock_stop_s=self._clock_stop_s
                    )
                    if row is None:
                        return None
                    fired = await self._fire(con, row)
            except Exception as error:
                if claimed is None or not _table_fault(error):
                    raise
                await self._put_off(con, claimed, error)
                return None
            if fired is not None:
                # Known and announced before the connection goes back, as a move is.
                self._store.committed(fired[0])
        if fired is None:
            return None
        committed, what, late_ms = fired
        self._failures.pop(committed.table_id, None)
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
        return committed

    async def _fire(
        self, con: Connection, row: asyncpg.Record
    ) -> tuple[Committed, Fired, int] | None:
        """The claimed table's resume, bot move or timeout, written under its claim:
        what was committed, what fired, and how late (ms). None if not due."""
        table = Known(
            table_id=row["id"],
            state=self._store.state_of(row["id"], row),
            version=row["version"],
            last_seq=row["last_seq"],
            seats=(),
            bot_seats=tuple(row["bot_seats"]),
            connected=tuple(row["connected_seats"]),
        )
        now_ms = row["now_ms"]
        due = table.state.due_ms()
        # A turn in play while nobody could reach the service gets its time back
        # first (the engine refuses a turn begun since, or given its time back already).
        state, events = resumed(table.state, row["stops"], now_ms)
        fired = Fired.RESUME if events else Fired.BOT
        bots, level = table.bot_seats, BotLevel(row["bot_level"])
        paced = self._bot_pace.paced(state, bots)
        # A paced bot lets a claim window that fell due close first (the clock's
        # `Timeout` below), then thinks again before its next action.
        window_over = state.claim_card >= 0 and now_ms >= state.claim_deadline_ms
        if not events and state.current in bots and not (paced and window_over):
            # At a person's pace, one action per due time: the next is due after
            # its own think time (`pacing`, written with the state by the commit).
            most, fired = (1, Fired.BOT_ACTION) if paced else (TURN_ACTIONS, Fired.BOT)
            try:
                state, events = bot_turn(state, state.current, now_ms, level=level, most=most)
            except Exception as error:  # a bot's fault must not stall its table
                log.error(
                    "bot_turn_failed",
                    table_id=str(table.table_id),
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
                await statements.SET_DEADLINE.execute(
                    con, table_id=table.table_id, turn_deadline=turn_deadline(state)
                )
                return None
        state, events = self._house.followed(state, events, now_ms, bots=bots, level=level)
        committed = table.advanced(state=state, events=events, seat=None, now_ms=now_ms)
        if not await self._store.commit(con, committed):
            # Under the claim's lock nothing else writes the table.
            raise RuntimeError("a claimed table moved under its claim")
        return committed, fired, max(0, now_ms - due)

    async def _put_off(self, con: Connection, row: asyncpg.Record, error: Exception) -> None:
        """Move a table whose due turn failed to fire out of the sweep for a while
        (1 s, then twice as long each time, up to `SWEEP_RETRY_MAX_S`)."""
        table_id = row["id"]
        failures = self._failures.pop(table_id, 0) + 1
        self._failures[table_id] = failures
        while len(self._failures) > SWEEP_FAILURES_KEPT:
            del self._failures[next(iter(self._failures))]
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
        await statements.PUT_OFF.execute(
            con, table_id=table_id, version=row["version"], delay_s=delay_s
        )
