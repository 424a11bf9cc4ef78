"""The ticket streams open on one replica: each follows its ticket until the
ticket ends, and a stream closed before that cancels its ticket."""

from __future__ import annotations

import asyncio
import contextlib
import math
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import asyncpg
import structlog

from services.common.db import Pool
from services.common.errors import DB_ERRORS
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm

from . import endings
from .messages import match_message, ticket_message
from .standing import Standing, standing
from .tickets import Reads, TicketRow
from .wakeups import Wakeups

log = structlog.get_logger(__name__)

PROGRESS_EVERY_S = 1.0
PROGRESS_PER_S = 200
"""Progress messages a replica sends per second, at most: with more streams
waiting than that, they take turns and each hears less often than every second
(2,000 waiting players hear every 10 s). Progress only tells a player how the
wait goes: in a rush of thousands queueing at once, the replica's time goes to
seating them (each message costs about as much as a tenth of a ticket's work)."""
FINAL = ("matched", "cancelled", "expired")
CANCEL_WAIT_S = 5.0
"""How long a new ticket waits for the player's previous one to be cancelled."""
OUTAGE = (*DB_ERRORS, asyncpg.PostgresError)
"""What a waiting stream rides out: the database unreachable, or refusing a read."""


class Streams:
    """The streams waiting for their tickets on this replica, and the tickets
    being cancelled because their stream closed."""

    def __init__(self, pool: Pool, wakeups: Wakeups, *, game_target: str = "") -> None:
        self._pool = pool
        self._wakeups = wakeups
        self._reads = Reads(pool)
        self._game_target = game_target
        self._standing = Standing({}, {})
        self._standing_at = -math.inf
        self._background: set[asyncio.Task[Any]] = set()
        self._cancelling: dict[str, asyncio.Task[None]] = {}
        """Each player's ticket being cancelled after its stream closed here."""
        self._open: dict[uuid.UUID, tuple[str, str | None, bool]] = {}
        """The tickets followed here, not ended yet: player, invite code, host."""
        self._ticker: asyncio.Future[None] | None = None

    async def follow(
        self,
        row: TicketRow,
        wrap: Callable[..., Any],
        *,
        host: bool = False,
    ) -> AsyncIterator[Any]:
        """Progress until the ticket ends; closing the stream cancels the ticket.
        The database failing meanwhile does neither: the stream waits on (leaving
        out the progress it cannot read) until the database answers again."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        ended = False
        self._open[row.id] = (row.player_id, row.invite_code, host)
        try:
            with self._wakeups.watch(row.id) as wake:
                self._ensure_ticker()
                yield wrap(ticket=ticket_message(row, game_target=self._game_target))
                while True:
                    # Set by a notification or the replica's sweep (`changed`: the
                    # ticket is read), or for the stream's progress turn (`_tick`).
                    await wake.wait()
                    wake.clear()
                    if wake.changed:
                        wake.changed = False
                        try:
                            current = await self._reads.get(row.id)
                        except OUTAGE:
                            # The sweep wakes this stream again once the database
                            # answers and shows the ticket ended.
                            continue
                        if current is None:
                            return
                        if current.state in FINAL:
                            ended = True
                            self._open.pop(row.id, None)
                            yield wrap(
                                ticket=ticket_message(current, game_target=self._game_target)
                            )
                            if current.state == "matched":
                                yield wrap(
                                    match=match_message(current, game_target=self._game_target)
                                )
                            return
                    try:
                        progress = await self._progress(row, loop.time() - started)
                    except OUTAGE:
                        continue  # no progress this time: the ticket keeps its place
                    yield wrap(progress=progress)
        finally:
            # Unless `cancel_closed` took the ticket over (the server stopped).
            if not ended and self._open.pop(row.id, None) is not None:
                self.cancel_later(row.player_id, row.id, row.invite_code, host)

    async def _progress(self, row: TicketRow, waited_s: float) -> mm.QueueProgress:
        """Where the ticket stands, from a reading of every queue at most a second old."""
        loop = asyncio.get_running_loop()
        if loop.time() - self._standing_at > PROGRESS_EVERY_S:
            # Marked read before reading: a database that fails is tried once a
            # second for all streams, which keep the last reading meanwhile.
            self._standing_at = loop.time()
            self._standing = await standing(self._pool, self._wakeups.watched())
        progress = mm.QueueProgress(
            players_waiting=self._standing.waiting.get((row.family, row.table_size), 0),
            position=self._standing.positions.get(row.id, 0),
            waited_ms=int(waited_s * 1000),
        )
        if row.invite_code:
            progress.seats_taken = await self._pool.fetchval(
                "SELECT count(*) FROM tickets WHERE invite_code = $1 AND state = 'queued'",
                row.invite_code,
            )
        return progress

    def _ensure_ticker(self) -> None:
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        """While streams wait here, once a second: the next `PROGRESS_PER_S`
        streams in turn are woken for a progress message (every one of them when
        fewer wait); and one query for all of them wakes
        those whose ticket ended, in case a notification was lost (a LISTEN
        connection being re-opened, a change made behind the service's back).
        Ends when no stream is left.

        One task for all the streams, rather than a timer each: a waiting stream
        costs nothing until it is woken."""
        while self._wakeups.count():
            await asyncio.sleep(PROGRESS_EVERY_S)
            self._wakeups.nudge(PROGRESS_PER_S)
            ids = self._wakeups.watched()
            with contextlib.suppress(*OUTAGE):
                rows = await self._pool.fetch(
                    "SELECT id FROM tickets WHERE id = ANY($1::uuid[]) AND state = ANY($2::text[])",
                    ids,
                    list(FINAL),
                )
                self._wakeups.wake([r["id"] for r in rows])

    def cancel_later(
        self,
        player: str,
        ticket_id: uuid.UUID,
        invite_code: str | None,
        host: bool,
        *,
        after: asyncio.Future[Any] | None = None,
    ) -> None:
        """The stream is gone (maybe cancelled itself): cancel outside its task,
        once ``after`` (the ticket's storing, still under way) is done."""

        async def work() -> None:
            if after is not None:
                await asyncio.wait({after})  # whatever its outcome
            try:
                if host and invite_code:
                    await endings.cancel_private(self._pool, invite_code, endings.HOST_LEFT)
                # Whatever state it is in: a ticket whose table is being set up
                # keeps the wish to leave.
                await endings.cancel(self._pool, ticket_id, endings.LEFT)
            except DB_ERRORS as error:
                # The ticket stays queued until it expires (GetTicket tells its fate).
                log.warning("ticket_cancel_failed", ticket_id=str(ticket_id), error=str(error))

        task = asyncio.ensure_future(work())
        self._background.add(task)
        self._cancelling[player] = task

        def done(finished: asyncio.Task[None]) -> None:
            self._background.discard(finished)
            if self._cancelling.get(player) is finished:
                del self._cancelling[player]

        task.add_done_callback(done)

    async def cancelled_first(self, player: str) -> None:
        """A stream the player just closed here is still cancelling its ticket: let
        that land first, so that queueing again is not refused as a second ticket."""
        pending = self._cancelling.get(player)
        if pending is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(pending), CANCEL_WAIT_S)

    async def cancel_closed(self, wait_s: float) -> None:
        """The server has stopped, closing every stream: cancel the tickets they
        followed and wait for those cancellations (at most ``wait_s``), so that
        none stays queued with nobody to play it. Before the pool closes.

        The stop does not wait for the streams' own endings, which come later
        (a stream cut as it sent a message, only once it is collected): their
        tickets are cancelled here instead."""
        for ticket_id, (player, invite_code, host) in list(self._open.items()):
            del self._open[ticket_id]
            self.cancel_later(player, ticket_id, invite_code, host)
        if not self._background:
            return
        _, late = await asyncio.wait(self._background, timeout=wait_s)
        if late:
            log.warning("ticket_cancels_unfinished", tickets=len(late))
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
