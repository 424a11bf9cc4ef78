"""Presence: whether each seated player's connection to a table (their Watch
stream) is up, told to the other seats as `PlayerConnection` events and shown as
`SeatView.connected`, whichever replica serves whom.

Every stream of a seated player holds a lease in `watch_leases`: written when
the stream opens, renewed by its replica every `beat_s` for `lease_s`, and ended
when the stream closes. A replica that dies renews nothing, and its leases run
out on their own. What was told is `tables.connected_seats`, changed under the
table's row lock with the event that tells it, so a row read gives the seats
told connected exactly as of its `last_seq`.

A seat is told connected as soon as a lease of its is written (by the replica
writing it) and disconnected once it has had no lease for `debounce_s` (by
whichever replica sweeps first: the lock and a second look make it once). A
stream moving to another replica, or a reconnect within the debounce, tells
nothing. Bots have no streams and are always connected; spectators have no seat
and no presence.

Presence is not a move: its event takes the next seq (Watch resumes across it
like any other) but keeps the table's version, so a player's `expected_version`
never goes stale for someone's connection. A move judged from a cached state
commits only at the last seq it judged from (`statements.WRITE`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

import asyncpg
import structlog

from services.common.db import Connection, Statement
from services.common.errors import DB_ERRORS

from . import eventlog
from .eventlog import LoggedEvent
from .fanout import Fanout
from .rules.events import PlayerConnection
from .store import timestamp

log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class PresenceTimings:
    lease_s: float = 15.0
    """How long a stream's lease lasts unless renewed: how soon the streams of a
    replica that died without closing them are taken for gone."""
    beat_s: float = 5.0
    """How often a replica renews the leases of its streams (well within a lease)."""
    debounce_s: float = 5.0
    """How long a seat must be without any stream before its drop is told: a
    reconnect (to any replica) within it is no news."""
    sweep_s: float = 1.0
    """How often a replica looks for seats whose drop is due."""
    purge_after_s: float = 300.0
    """Leases that ran out this long ago are deleted."""


SWEEP_BATCH = 100
"""Due drops one sweep reads; the next sweep reads the rest."""

RENEW = (
    "WITH renewed AS (INSERT INTO watch_leases (stream_id, table_id, seat, expires_at)"
    " SELECT x.s, x.t, x.seat, clock_timestamp() + make_interval(secs => $4)"
    " FROM unnest($1::uuid[], $2::uuid[], $3::int[]) AS x(s, t, seat)"
    " WHERE EXISTS (SELECT 1 FROM tables WHERE id = x.t)"
    " ON CONFLICT (stream_id) DO UPDATE SET expires_at = EXCLUDED.expires_at"
    " WHERE NOT watch_leases.ended RETURNING table_id, seat)"
    " SELECT DISTINCT r.table_id, r.seat FROM renewed r JOIN tables t ON t.id = r.table_id"
    " WHERE t.status = 'active' AND NOT r.seat = ANY(t.connected_seats)"
)
"""Write or renew the leases of streams ($1, at table $2, seat $3) for $4 s; the
seats among them not told connected yet. A table gone (purged) takes no lease."""

END = (
    "INSERT INTO watch_leases (stream_id, table_id, seat, expires_at, ended)"
    " SELECT $1, $2, $3, clock_timestamp(), true WHERE EXISTS (SELECT 1 FROM tables"
    " WHERE id = $2) ON CONFLICT (stream_id) DO UPDATE SET ended = true,"
    " expires_at = least(watch_leases.expires_at, clock_timestamp())"
)
"""A stream closed: its lease ends now (written ended, if its first write is still
on the way), and counts as seen until now for the debounce."""

DUE_DROPS = (
    "SELECT t.id AS table_id, s.seat FROM tables t"
    " CROSS JOIN LATERAL unnest(t.connected_seats) AS s(seat)"
    " WHERE t.status = 'active' AND cardinality(t.connected_seats) > 0"
    " AND NOT EXISTS (SELECT 1 FROM watch_leases l WHERE l.table_id = t.id"
    " AND l.seat = s.seat"
    " AND l.expires_at > (SELECT clock_timestamp()) - make_interval(secs => $1))"
    " AND (SELECT coalesce(restarted_at, '-infinity') FROM table_clock WHERE id = 1)"
    " < (SELECT clock_timestamp()) - make_interval(secs => $3)"
    " LIMIT $2"
)
"""Seats told connected that have had no lease for $1 s: their drop is due. None is
within $3 s (a lease and a debounce) of the end of an outage the table clock
recorded: leases that ran out while nobody could renew them are renewed first."""

LOCK = (
    "SELECT version, last_seq, status, connected_seats,"
    " (extract(epoch from clock_timestamp()) * 1000)::bigint AS now_ms"
    " FROM tables WHERE id = $1 FOR UPDATE"
)

SEEN = (
    "SELECT EXISTS (SELECT 1 FROM watch_leases WHERE table_id = $1 AND seat = $2"
    " AND expires_at > clock_timestamp() - make_interval(secs => $3))"
)
"""Whether the seat has held a lease within the last $3 s (0: holds one now)."""

TELL = Statement(
    "WITH told AS (UPDATE tables SET last_seq = :seq, connected_seats = :told::smallint[]"
    " WHERE id = :table_id)"
    " INSERT INTO table_events (table_id, seq, version, kind, payload, created_at)"
    " VALUES (:table_id, :seq, :version, :kind, :payload, :at)"
)
"""The event at the next seq and the current version, and the seats now told connected."""

PURGE = "DELETE FROM watch_leases WHERE expires_at < clock_timestamp() - make_interval(secs => $1)"


class Presence:
    """This replica's part: its streams' leases, and the drops it sweeps."""

    def __init__(
        self, pool: asyncpg.Pool, fanout: Fanout, timings: PresenceTimings | None = None
    ) -> None:
        self._pool = pool
        self._fanout = fanout
        self.timings = timings or PresenceTimings()
        self._streams: dict[uuid.UUID, tuple[uuid.UUID, int]] = {}
        """This replica's open streams of seated players: their table and seat."""
        self._tasks: set[asyncio.Task[object]] = set()
        self._loop: asyncio.Task[None] | None = None

    # --- a replica's streams -----------------------------------------------------

    def arrived(self, table_id: uuid.UUID, seat: int) -> uuid.UUID:
        """A seated player's stream opened here: its lease, written apart (the
        stream does not wait on it). Give it back with `left`."""
        stream = uuid.uuid4()
        self._streams[stream] = (table_id, seat)
        self._spawn(self._renew([stream]))
        return stream

    def left(self, stream: uuid.UUID) -> None:
        """The stream closed: its lease ends (written apart; if that fails, the lease
        runs out on its own)."""
        where = self._streams.pop(stream, None)
        if where is not None:
            self._spawn(self._end(stream, *where))

    def _spawn(self, work: Coroutine[Any, Any, object]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _renew(self, streams: list[uuid.UUID]) -> bool:
        """Write or renew the leases of ``streams`` (those still open), and tell the
        seats among them not told connected yet; False if the leases were not written."""
        known = [s for s in streams if s in self._streams]
        if not known:
            return True
        try:
            due = await self._pool.fetch(
                RENEW,
                known,
                [self._streams[s][0] for s in known],
                [self._streams[s][1] for s in known],
                self.timings.lease_s,
            )
        except (*DB_ERRORS, asyncpg.PostgresError) as error:
            # The next beat writes them again.
            log.warning("presence_renew_failed", streams=len(known), error=str(error))
            return False
        try:
            for row in due:
                await self.tell(row["table_id"], row["seat"], connected=True)
        except (*DB_ERRORS, asyncpg.PostgresError) as error:
            log.warning("presence_tell_failed", error=str(error))  # the next beat tells them
        return True

    async def _end(self, stream: uuid.UUID, table_id: uuid.UUID, seat: int) -> None:
        try:
            await self._pool.execute(END, stream, table_id, seat)
        except (*DB_ERRORS, asyncpg.PostgresError) as error:
            log.warning("presence_end_failed", table_id=str(table_id), error=str(error))

    # --- telling the table -----------------------------------------------------------

    async def tell(self, table_id: uuid.UUID, seat: int, *, connected: bool) -> bool:
        """Log that ``seat`` is (dis)connected, if it still is after a look under the
        table's lock and was told otherwise; True if it was told now."""
        async with self._pool.acquire() as con:
            logged = await self._told(con, table_id, seat, connected=connected)
        if logged is None:
            return False
        # Announced before anything else: this replica's watchers, the others by NOTIFY.
        self._fanout.published(table_id, [logged])
        return True

    async def _told(
        self, con: Connection, table_id: uuid.UUID, seat: int, *, connected: bool
    ) -> LoggedEvent | None:
        async with con.transaction():
            row = await con.fetchrow(LOCK, table_id)
            if row is None or row["status"] != "active":
                return None
            told = list(row["connected_seats"])
            if (seat in told) == connected:
                return None
            within = 0.0 if connected else self.timings.debounce_s
            if await con.fetchval(SEEN, table_id, seat, within) != connected:
                return None
            told = sorted({*told, seat}) if connected else [s for s in told if s != seat]
            event = PlayerConnection(seat, connected)
            seq, at = row["last_seq"] + 1, timestamp(row["now_ms"])
            await TELL.execute(
                con,
                table_id=table_id,
                seq=seq,
                version=row["version"],
                told=told,
                kind=eventlog.kind_of(event),
                payload=eventlog.encode(event),
                at=at,
            )
        log.info("presence_told", table_id=str(table_id), seat=seat, connected=connected)
        return LoggedEvent(seq, row["version"], event, at)

    # --- the replica's loop --------------------------------------------------------

    async def sweep(self) -> int:
        """Tell the drops that are due; how many were told."""
        timings = self.timings
        grace = timings.lease_s + timings.debounce_s
        rows = await self._pool.fetch(DUE_DROPS, timings.debounce_s, SWEEP_BATCH, grace)
        told = 0
        for row in rows:
            told += await self.tell(row["table_id"], row["seat"], connected=False)
        return told

    def start(self) -> None:
        self._loop = asyncio.create_task(self._run(), name="presence")

    async def _run(self) -> None:
        timings = self.timings
        renewed = purged = time.monotonic()
        failures = 0
        # After a failure the leases may have run out (the database was out of
        # reach): they are renewed before any drop is swept, or this replica's own
        # players would be told gone, and back a moment later.
        behind = False
        while True:
            await asyncio.sleep(timings.sweep_s)
            try:
                now = time.monotonic()
                if behind or now - renewed >= timings.beat_s:
                    behind = not await self._renew(list(self._streams))
                    if behind:
                        continue
                    renewed = now
                if now - purged >= timings.purge_after_s / 10:
                    purged = now
                    await self._pool.execute(PURGE, timings.purge_after_s)
                await self.sweep()
                failures = 0
            except (*DB_ERRORS, asyncpg.PostgresError) as error:
                failures += 1
                behind = True
                if failures % 20 == 1:
                    log.warning("presence_sweep_failed", error=str(error), failures=failures)
            except Exception:
                failures += 1
                if failures % 20 == 1:
                    log.exception("presence_sweep_crashed", failures=failures)

    async def stop(self, wait_s: float = 2.0) -> None:
        """Stop the loop, and give the leases being ended a moment to be written."""
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop
        pending = list(self._tasks)
        if pending:
            await asyncio.wait(pending, timeout=wait_s)
        for task in pending:
            task.cancel()
