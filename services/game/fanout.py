"""Live table events for this replica's `Watch` streams.

Events committed by this replica reach its own watchers straight away, with
no read (`published`). Other replicas learn of them by a notice (`notices`):
"table T reached seq S". The events themselves are read once from the log and
handed to every local watcher of T, so a lost notice costs latency, never an
event: a periodic check of the watched tables' `last_seq` catches up after any
gap, including a reconnect after a database outage, and a watcher that sees a
gap in the seqs re-reads the log.

A watcher follows a table with `follow`: it reads the log itself until it has
caught up (`caught_up`), and only then takes live events. Until then the
fan-out queues nothing for it, however long the log it has to read: its queue
is for a watcher at the table's head, and fills only when that watcher reads
slower than the table plays.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncGenerator

import asyncpg
import structlog

from services.common.errors import DB_ERRORS
from services.common.metrics import WATCH_STREAMS

from .eventlog import READ_BATCH, LoggedEvent, read_events
from .notices import FAULTS, LISTEN_CHECK_S, Notices
from .rules.events import GameEnded
from .subscription import (
    CUT_OFF,
    FELL_BEHIND,
    READ_FAILED,
    STOPPING,
    UNREADABLE,
    Inbox,
    ResumeRequired,
    Subscription,
    TableGone,
    end,
)

CUT_OFF_S = 10.0
"""Live watchers are sent to resume once this replica has not reached the database
for this long: it cannot tell them what they miss meanwhile."""
log = structlog.get_logger(__name__)


class Fanout:
    def __init__(
        self,
        pool: asyncpg.Pool,
        dsn: str,
        *,
        queue_size: int = 256,
        poll_interval: float = 1.0,
        listen_check_s: float = LISTEN_CHECK_S,
        cut_off_s: float = CUT_OFF_S,
    ) -> None:
        self._pool = pool
        self._queue_size = queue_size
        self._poll_interval = poll_interval
        self._cut_off_s = cut_off_s
        self._notices = Notices(
            pool,
            dsn,
            self._heard,
            poll_interval=poll_interval,
            listen_check_s=listen_check_s,
        )
        self._polled_at = time.monotonic()
        """When a read of the watched tables' positions last went through (or none
        were watched). With the listening connection's check, it says when this
        replica last reached the database: a pool busy with moves is no cut-off."""
        self._subs: dict[uuid.UUID, set[Subscription]] = {}
        self._cursor: dict[uuid.UUID, int] = {}
        """The last seq handed to the table's live watchers; none while it has none."""
        self._pending: set[uuid.UUID] = set()
        self._running: dict[uuid.UUID, asyncio.Task[None]] = {}
        self._poller: asyncio.Task[None] | None = None
        self._watching: asyncio.Task[None] | None = None
        self.closing = False

    @property
    def connected(self) -> asyncio.Event:
        """The listening connection is up."""
        return self._notices.connected

    @property
    def streams(self) -> int:
        return sum(len(s) for s in self._subs.values())

    async def start(self) -> None:
        self._notices.start()
        self._poller = asyncio.create_task(self._poll_loop(), name="fanout-poll")
        self._watching = asyncio.create_task(self._watchdog(), name="fanout-watchdog")

    async def stop(self) -> None:
        for task in (self._poller, self._watching):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._notices.stop()
        for task in list(self._running.values()):
            task.cancel()

    def published(self, table_id: uuid.UUID, events: list[LoggedEvent]) -> None:
        """Events this replica has just committed, in seq order."""
        last = events[-1].seq
        self._notices.moved(table_id, last)
        subs = self._subs.get(table_id)
        if not subs or self._cursor.get(table_id, -1) >= last:
            return
        self._cursor[table_id] = last
        for sub in list(subs):
            self._push(sub, events)

    def close_streams(self) -> None:
        """Tell every local watcher, and any that comes later, to resume elsewhere.

        Called first thing on shutdown: idle streams would otherwise hold the
        server for its whole grace period and then end without a reason."""
        self.closing = True
        self._end_all(STOPPING)

    def _end_all(self, why: str) -> None:
        for subs in self._subs.values():
            for sub in subs:
                end(sub, why)

    # --- one watcher ---------------------------------------------------------------

    async def follow(
        self, table_id: uuid.UUID, after_seq: int, *, logged_to: int
    ) -> AsyncGenerator[LoggedEvent, None]:
        """Every event of the table after ``after_seq``, in seq order, each once: the
        log first, then live ones as they come, until the game's end. ``logged_to``:
        a seq the log held when the watcher asked (its table's `last_seq`).

        Raises `ResumeRequired` when the watcher must resume from its last event
        (this replica is stopping, lost the database, or the watcher fell behind),
        and `TableGone` when retention deleted the table while its log was read.
        Close it (`contextlib.aclosing`) however the watch ends: it holds a
        subscription until then."""
        sub = self.subscribe(table_id, after_seq)
        try:
            while True:
                if sub.ended is not None:  # asked at every batch: a long catch-up too
                    raise ResumeRequired(sub.ended, sub.position)
                try:
                    batch = await read_events(self._pool, table_id, sub.position)
                except DB_ERRORS:
                    raise ResumeRequired(READ_FAILED, sub.position) from None
                for item in batch:
                    yield item
                    sub.position = item.seq
                    if isinstance(item.event, GameEnded):
                        return
                if len(batch) >= READ_BATCH:
                    continue
                del batch  # an idle stream holds no events
                if sub.position < logged_to:
                    # Only retention deletes events, with their (finished) table.
                    raise TableGone
                if sub.ended is not None or not self.caught_up(sub):
                    continue  # told to resume, or the table moved while the log was read
                # Live: wait for the fan-out; anything it skipped is read from the log.
                while sub.ended is None:
                    if sub.queue.empty():
                        await sub.queue.arrival()
                        continue
                    live = sub.queue.pop()
                    if live is None or live.seq <= sub.position:
                        continue
                    if live.seq > sub.position + 1:
                        break
                    yield live
                    sub.position = live.seq
                    if isinstance(live.event, GameEnded):
                        return
        finally:
            self.unsubscribe(sub)

    def subscribe(self, table_id: uuid.UUID, position: int) -> Subscription:
        """A watcher's live feed (as `follow` takes one); give it back with
        `unsubscribe` however the watch ends."""
        sub = Subscription(
            table_id, position, Inbox(self._queue_size), STOPPING if self.closing else None
        )
        self._subs.setdefault(table_id, set()).add(sub)
        WATCH_STREAMS.inc()
        return sub

    def caught_up(self, sub: Subscription) -> bool:
        """Called by a watcher that has read the log to its end (``sub.position``):
        True once it is live, False if events came while it was reading, which it
        must read too (it is asked again then). Nothing is awaited in between, so
        no event falls between its last read and its first live one."""
        if sub.live:
            return True
        if sub.missed:
            sub.missed = False
            return False
        # A table new to this replica starts here, not from an old seq. One that
        # other watchers made live already may be past this watcher's last read:
        # the events between went out before it was live, so it reads them too.
        if self._cursor.setdefault(sub.table_id, sub.position) > sub.position:
            return False
        sub.live = True
        return True

    def unsubscribe(self, sub: Subscription) -> None:
        WATCH_STREAMS.dec()
        table_id = sub.table_id
        subs = self._subs.get(table_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[table_id]
                self._cursor.pop(table_id, None)

    # --- events committed elsewhere --------------------------------------------------

    def _heard(self, table_id: uuid.UUID, seq: int) -> None:
        """Another replica's notice: the table reached ``seq``."""
        if table_id in self._subs and self._cursor.get(table_id, -1) < seq:
            self._kick(table_id)

    def _kick(self, table_id: uuid.UUID) -> None:
        if table_id in self._running:
            self._pending.add(table_id)
            return
        self._running[table_id] = asyncio.create_task(self._deliver(table_id))

    async def _deliver(self, table_id: uuid.UUID) -> None:
        try:
            while True:
                self._pending.discard(table_id)
                subs = self._subs.get(table_id)
                if not subs:
                    return
                after = self._cursor.get(table_id)
                if after is None:
                    # Nobody here is live yet: the watchers reading the log will read
                    # this too (and are told so); the fan-out reads nothing for them.
                    for sub in subs:
                        sub.missed = True
                    return
                events = await read_events(self._pool, table_id, after)
                if table_id not in self._subs:
                    return  # the last watcher left during the read: no cursor to keep
                if not events:
                    # The log ends there: the periodic check needs no read until it grows.
                    self._cursor[table_id] = max(after, self._cursor.get(table_id, 0))
                if events:
                    # Never backwards: a commit published meanwhile moved it on.
                    self._cursor[table_id] = max(events[-1].seq, self._cursor.get(table_id, 0))
                    for sub in list(self._subs.get(table_id, ())):
                        self._push(sub, events)
                if table_id not in self._pending and len(events) < READ_BATCH:
                    return
        except FAULTS as error:
            log.warning("fanout_read_failed", table_id=str(table_id), error=str(error))
        except Exception:
            # An event this replica cannot read (a newer replica's, say): its live
            # watchers are told to resume (from the log, wherever it is read)
            # rather than waiting for news that will never come.
            log.exception("fanout_deliver_failed", table_id=str(table_id))
            for sub in list(self._subs.get(table_id, ())):
                end(sub, UNREADABLE)
        finally:
            self._running.pop(table_id, None)
            if table_id not in self._subs:
                self._pending.discard(table_id)  # nobody left to read it for

    def _push(self, sub: Subscription, events: list[LoggedEvent]) -> None:
        if not sub.live:
            sub.missed = True  # it reads the log before it goes live
            return
        for item in events:
            if item.seq <= sub.position:
                continue
            try:
                sub.queue.put_nowait(item)
            except asyncio.QueueFull:
                # A watcher this far behind is told to resume from its last seq
                # rather than holding memory (or the table) hostage.
                end(sub, FELL_BEHIND)
                break

    async def _poll_loop(self) -> None:
        """Polls with or without the listening connection: while it cannot connect
        (the server's connection limit reached, say) the pool's may still read."""
        while True:
            await asyncio.sleep(self._poll_interval)
            await self._poll()

    async def _watchdog(self) -> None:
        """Apart from the poll, which may hang on a connection that went silent."""
        while True:
            await asyncio.sleep(self._poll_interval)
            reached_at = max(self._polled_at, self._notices.reached_at)
            if self._subs and time.monotonic() - reached_at > self._cut_off_s:
                # Cut off from the database while others may play on: silence
                # would look like a quiet table. Resumed, each learns the truth.
                log.warning("fanout_cut_off", streams=self.streams)
                self._end_all(CUT_OFF)

    async def _poll(self) -> None:
        """The safety net: find watched tables that moved without a notification."""
        tables = list(self._subs)
        if not tables:
            self._polled_at = time.monotonic()
            return
        try:
            rows = await self._pool.fetch(
                "SELECT id, last_seq FROM tables WHERE id = ANY($1::uuid[])", tables
            )
        except FAULTS:
            return
        self._polled_at = time.monotonic()
        for row in rows:
            # A table with no cursor has no live watcher: those catching up read
            # the log themselves, and the first to go live sets the cursor.
            cursor = self._cursor.get(row["id"])
            if cursor is not None and row["last_seq"] > cursor:
                self._kick(row["id"])
