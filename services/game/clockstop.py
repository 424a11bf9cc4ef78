"""When the turns' clock stops: while nobody can reach the service (the database,
or every replica, out), no move can be made, but the deadlines turns run on are
times of day and pass all the same.

The whole feature is here:

- Each replica marks about every `BEAT_S` that it reached the database (the one
  row of `table_clock`), over a connection of its own so that no wait for a
  pooled one delays the mark (`ClockStops.run`, `beat`).
- The first mark after a gap of more than `CLOCK_STOP_S` records the gap as the
  clock's last stop, the one before it kept too, and makes every turn then in
  play due at once (`rearm`).
- The sweeper claims no due turn at all while nobody has marked for that long
  (`CLOCK_MARKED`: a stop not yet recorded may be under way), and reads the last
  two stops with each turn it claims (`CLOCK_STOPS`). Before anything else it
  gives the turn the time it had left (`resumed`: the engine's `Resume`), the
  stop before the last first, so a database that goes out again before every
  turn was resumed loses none.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime

import asyncpg
import structlog

from services.common.db import Pool, Statement
from services.common.errors import DB_ERRORS

from .rules.actions import SYSTEM, Resume
from .rules.engine import apply
from .rules.errors import RuleError
from .rules.events import Event
from .rules.state import GameState

BEAT_S = 1.0
"""How often each replica marks that it reached the database."""
CLOCK_STOP_S = 5.0
"""A gap this long in every replica's marks is a stop: several beats missed at
once, not one slow beat."""
BEAT_TIMEOUT_S = 2.0
"""The longest a mark may take: longer, the database is in no state to serve moves."""
REARM_ATTEMPTS = 30
"""Tries at re-arming a stop's turns, one a beat apart."""

log = structlog.get_logger(__name__)


def _ms(column: str) -> str:
    return f"(extract(epoch from {column}) * 1000)::bigint"


CLOCK_STOPS = (
    f"(SELECT ARRAY[{_ms('prev_stopped_at')}, {_ms('prev_restarted_at')},"
    f" {_ms('stopped_at')}, {_ms('restarted_at')}] FROM table_clock WHERE id = 1)"
)
"""The clock's last two stops (ms: the one before the last from and to, then the
last), as the sweeper's claim reads them."""

CLOCK_MARKED = (
    "(SELECT beat_at FROM table_clock WHERE id = 1)"
    " > (SELECT clock_timestamp()) - make_interval(secs => :clock_stop_s)"
)
"""Whether a replica marked the clock within ``clock_stop_s``: the sweeper's claim
reads no table otherwise."""

BEAT = Statement(
    "WITH last AS (SELECT beat_at, clock_timestamp() AS now_at"
    " FROM table_clock WHERE id = 1 FOR UPDATE),"
    " gap AS (SELECT *, beat_at < now_at - make_interval(secs => :clock_stop_s) AS new"
    " FROM last)"
    " UPDATE table_clock c SET beat_at = GREATEST(g.beat_at, g.now_at),"
    " prev_stopped_at = CASE WHEN g.new THEN c.stopped_at ELSE c.prev_stopped_at END,"
    " prev_restarted_at = CASE WHEN g.new THEN c.restarted_at ELSE c.prev_restarted_at END,"
    " stopped_at = CASE WHEN g.new THEN g.beat_at ELSE c.stopped_at END,"
    " restarted_at = CASE WHEN g.new THEN g.now_at ELSE c.restarted_at END"
    " FROM gap g WHERE c.id = 1"
    f" RETURNING c.stopped_at, {_ms('c.stopped_at')} AS stopped_ms,"
    f" {_ms('c.restarted_at')} AS restarted_ms, g.new IS TRUE AS new"
)
"""A replica's mark that it reached the database. When nobody has for more than
``clock_stop_s``, the gap is recorded as the clock's last stop, the one before it
kept too. Holds the clock's row for this one statement only."""

REARM = Statement(
    "UPDATE tables SET turn_deadline = now() WHERE id IN (SELECT id FROM tables"
    " WHERE status = 'active' AND turn_deadline > :stopped_at FOR UPDATE SKIP LOCKED)"
)
"""Every turn in play when the clock stopped, due at once: the sweeper gives it
its time back without waiting for its old deadline to come round. A table locked
meanwhile is left alone: it gets its time back when it falls due."""


def resumed(
    state: GameState, stops: list[int | None], now_ms: int
) -> tuple[GameState, list[Event]]:
    """``state`` with the time its turn had left given back for each of the clock's
    last two stops (as `CLOCK_STOPS` reads them), the stop before the last first.
    The engine refuses a turn begun since a stop, or given its time back already:
    then nothing happens."""
    events: list[Event] = []
    for stopped, restarted in ((stops[0], stops[1]), (stops[2], stops[3])):
        if stopped is None or restarted is None:
            continue
        with contextlib.suppress(RuleError):
            state, more = apply(state, SYSTEM, Resume(stopped, restarted), now_ms)
            events += more
    return state, events


class ClockStops:
    """This replica's marks of the turns' clock, and the re-arming of the turns a
    stop it records caught."""

    def __init__(
        self, pool: Pool, *, dsn: str, clock_stop_s: float = CLOCK_STOP_S, beat_s: float = BEAT_S
    ) -> None:
        self._pool = pool
        self._dsn = dsn
        self.clock_stop_s = clock_stop_s
        self._beat_s = beat_s

    async def beat(self, con: asyncpg.Connection) -> datetime | None:
        """Mark, over ``con``, that this replica reached the database. The first mark
        after a gap records it as a stop of the turns' clock, and says when it
        began: every turn then in play is to be made due at once (`rearm`)."""
        row = await BEAT.fetchrow(con, clock_stop_s=self.clock_stop_s, timeout=BEAT_TIMEOUT_S)
        assert row is not None  # the clock's one row, always
        if not row["new"]:
            return None
        log.warning("clock_stopped", stopped_s=(row["restarted_ms"] - row["stopped_ms"]) / 1000)
        stopped_at: datetime = row["stopped_at"]
        return stopped_at

    async def rearm(self, stopped_at: datetime) -> int:
        """Make every turn in play at ``stopped_at`` due now, for the sweeper to
        give it its time back; how many. A table locked meanwhile is skipped: it
        gets its time back when it falls due."""
        done = await REARM.execute(self._pool, stopped_at=stopped_at)
        return int(done.split()[-1])

    async def run(self) -> None:
        """Mark every `beat_s` that this replica reaches the database, over a
        connection of its own (a busy pool must not delay the mark), and re-arm the
        turns of a stop it records, apart (a mark must not wait on them). Failures
        are logged as the sweep loop's are: the first, then every twentieth. While
        no replica marks, no turn is swept. Runs until cancelled."""
        failures = 0
        con: asyncpg.Connection | None = None
        rearming: set[asyncio.Task[None]] = set()
        try:
            while True:
                try:
                    if con is None or con.is_closed():
                        con = await asyncpg.connect(self._dsn, timeout=BEAT_TIMEOUT_S)
                    stopped_at = await self.beat(con)
                    if stopped_at is not None:
                        task = asyncio.create_task(self._rearm_all(stopped_at))
                        rearming.add(task)
                        task.add_done_callback(rearming.discard)
                    failures = 0
                except (*DB_ERRORS, asyncpg.PostgresError) as error:
                    if con is not None:
                        con.terminate()  # a fresh one next time: this one may be stuck
                        con = None
                    failures += 1
                    if failures % 20 == 1:
                        log.warning("clock_beat_failed", error=str(error), failures=failures)
                except Exception:
                    failures += 1
                    if failures % 20 == 1:
                        log.exception("clock_beat_crashed", failures=failures)
                await asyncio.sleep(self._beat_s)
        finally:
            for task in rearming:
                task.cancel()
            if con is not None:
                con.terminate()

    async def _rearm_all(self, stopped_at: datetime) -> None:
        """`rearm`, tried again while the database is still coming back (the pool's
        connections from before the stop fail once each); a turn never re-armed
        gets its time back when it falls due all the same."""
        for attempt in range(REARM_ATTEMPTS):
            try:
                rearmed = await self.rearm(stopped_at)
            except (*DB_ERRORS, asyncpg.PostgresError) as error:
                if attempt == REARM_ATTEMPTS - 1:
                    log.warning("clock_rearm_failed", error=str(error), attempts=REARM_ATTEMPTS)
                    return
                await asyncio.sleep(self._beat_s)
            else:
                log.info("clock_turns_rearmed", turns=rearmed)
                return
