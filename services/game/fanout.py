"""Live table events for this replica's `Watch` streams.

Events committed by this replica reach its own watchers straight away, with
no read (`published`). Other replicas learn of them by NOTIFY: one LISTEN
connection per replica, and one notification per flush for all the tables
that moved since the last one, sent after the commits rather than inside
them (a NOTIFY inside a transaction serialises every commit on one lock).
A notification only says "table T reached seq S"; the events themselves are
read once from the log and handed to every local watcher of T, so a lost
notification costs latency, never an event: a periodic check of the watched
tables' `last_seq` catches up after any gap, including a reconnect after a
database outage, and a watcher that sees a gap in the seqs re-reads the log.

A watcher that starts (or resumes) behind the table reads the log itself until
it has caught up (`caught_up`); only then does it take live events. Until then
the fan-out queues nothing for it, however long the log it has to read: its
queue is for a watcher at the table's head, and fills only when that watcher
reads slower than the table plays.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import structlog

from services.common.db import Connection, Pool
from services.common.metrics import WATCH_STREAMS

from . import eventlog
from .rules.events import Event
from .subscription import CUT_OFF, FELL_BEHIND, STOPPING, UNREADABLE, Inbox, Subscription, end

CHANNEL = "table_events"
LISTEN_CHECK_S = 5.0
"""The listening connection must answer a query this fast, or it is replaced."""
CUT_OFF_S = 10.0
"""Live watchers are sent to resume once this replica has not reached the database
for this long: it cannot tell them what they miss meanwhile."""
NOTIFY_ITEMS = 150
"""Tables per notification: a payload stays under PostgreSQL's 8,000 bytes."""
log = structlog.get_logger(__name__)
_DB_ERRORS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)
"""What a lost or cut database connection raises; InternalClientError comes from a
connection cut mid-query (MagicStack/asyncpg#784) and must not end the fan-out."""


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    seq: int
    version: int
    event: Event
    at: datetime


async def read_events(
    con: Connection | Pool, table_id: uuid.UUID, after: int, limit: int = 1000
) -> list[LoggedEvent]:
    rows = await con.fetch(
        "SELECT seq, version, kind, payload, created_at FROM table_events"
        " WHERE table_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        table_id,
        after,
        limit,
    )
    return [
        LoggedEvent(
            r["seq"], r["version"], eventlog.decode(r["kind"], r["payload"]), r["created_at"]
        )
        for r in rows
    ]


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
        self._dsn = dsn
        self._queue_size = queue_size
        self._poll_interval = poll_interval
        self._listen_check_s = listen_check_s
        self._cut_off_s = cut_off_s
        self._reached_at = time.monotonic()
        """When this replica last reached the database: its listening connection's
        check, or a read of the watched tables' positions (or none were watched).
        Either will do: a pool busy with moves is no cut-off."""
        self._subs: dict[uuid.UUID, set[Subscription]] = {}
        self._cursor: dict[uuid.UUID, int] = {}
        self._pending: set[uuid.UUID] = set()
        self._running: dict[uuid.UUID, asyncio.Task[None]] = {}
        self._task: asyncio.Task[None] | None = None
        self._outbox: dict[uuid.UUID, int] = {}
        self._flush_wanted = asyncio.Event()
        self._notifier: asyncio.Task[None] | None = None
        self._poller: asyncio.Task[None] | None = None
        self._watching: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()
        self.closing = False

    @property
    def streams(self) -> int:
        return sum(len(s) for s in self._subs.values())

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="fanout")
        self._notifier = asyncio.create_task(self._notify_loop(), name="notifier")
        self._poller = asyncio.create_task(self._poll_loop(), name="fanout-poll")
        self._watching = asyncio.create_task(self._watchdog(), name="fanout-watchdog")

    async def stop(self) -> None:
        for task in (self._task, self._notifier, self._poller, self._watching):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._flush()  # the last commits' news, for the other replicas
        for task in list(self._running.values()):
            task.cancel()

    def published(self, table_id: uuid.UUID, events: list[LoggedEvent]) -> None:
        """Events this replica has just committed, in seq order."""
        last = events[-1].seq
        self._outbox[table_id] = max(last, self._outbox.get(table_id, 0))
        self._flush_wanted.set()
        subs = self._subs.get(table_id)
        if not subs or self._cursor.get(table_id, -1) >= last:
            return
        self._cursor[table_id] = last
        for sub in list(subs):
            self._push(sub, events)

    async def _notify_loop(self) -> None:
        while True:
            await self._flush_wanted.wait()
            self._flush_wanted.clear()
            await self._flush()

    async def _flush(self) -> None:
        if not self._outbox:
            return
        items = [f"{table}:{seq}" for table, seq in self._outbox.items()]
        self._outbox.clear()
        payloads = [
            ",".join(items[i : i + NOTIFY_ITEMS]) for i in range(0, len(items), NOTIFY_ITEMS)
        ]
        try:
            await self._pool.execute(
                "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", CHANNEL, payloads
            )
        except _DB_ERRORS as error:
            # The other replicas' periodic check of their watched tables catches up.
            log.warning("notify_failed", tables=len(items), error=str(error))

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

    def subscribe(self, table_id: uuid.UUID, position: int) -> Subscription:
        """A watcher's live feed; give it back with `unsubscribe` however the watch ends.
        (Two plain calls rather than a context manager: an idle stream holds no
        generator for it.)"""
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

    def _notified(self, _con: object, _pid: int, _channel: str, payload: object) -> None:
        for item in str(payload).split(","):
            table_text, _, seq_text = item.partition(":")
            try:
                table_id, seq = uuid.UUID(table_text), int(seq_text)
            except ValueError:
                continue
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
                if table_id not in self._pending and len(events) < 1000:
                    return
        except _DB_ERRORS as error:
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

    async def _run(self) -> None:
        backoff = 0.1
        while True:
            try:
                con = await asyncpg.connect(self._dsn)
            except _DB_ERRORS as error:
                self.connected.clear()
                log.warning("fanout_connect_failed", error=str(error))
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            backoff = 0.1
            try:
                await con.add_listener(CHANNEL, self._notified)
                self.connected.set()
                while True:
                    await asyncio.sleep(self._poll_interval)
                    # A socket the network lost without a word never closes: ask.
                    await con.fetchval("SELECT 1", timeout=self._listen_check_s)
                    self._reached_at = time.monotonic()
            except _DB_ERRORS as error:
                log.warning("fanout_connection_lost", error=str(error))
            finally:
                self.connected.clear()
                with contextlib.suppress(Exception):
                    await con.close(timeout=1)

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
            if self._subs and time.monotonic() - self._reached_at > self._cut_off_s:
                # Cut off from the database while others may play on: silence
                # would look like a quiet table. Resumed, each learns the truth.
                log.warning("fanout_cut_off", streams=self.streams)
                self._end_all(CUT_OFF)

    async def _poll(self) -> None:
        """The safety net: find watched tables that moved without a notification."""
        tables = list(self._subs)
        if not tables:
            self._reached_at = time.monotonic()
            return
        try:
            rows = await self._pool.fetch(
                "SELECT id, last_seq FROM tables WHERE id = ANY($1::uuid[])", tables
            )
        except _DB_ERRORS:
            return
        self._reached_at = time.monotonic()
        for row in rows:
            # A table with no cursor has no live watcher: those catching up read
            # the log themselves, and the first to go live sets the cursor.
            cursor = self._cursor.get(row["id"])
            if cursor is not None and row["last_seq"] > cursor:
                self._kick(row["id"])
