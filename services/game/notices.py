"""How the replicas tell one another that a table moved: PostgreSQL NOTIFY and LISTEN.

A notice says only "table T reached seq S" (``T:S``, many to a notification); the
events themselves stay in the log, read by whoever needs them. A replica sends
one notification per flush for all the tables that moved since the last one,
after the commits rather than inside them (a NOTIFY inside a transaction
serialises every commit on one lock). It hears the others' on one LISTEN
connection, which it checks with a query every `poll_interval` and replaces when
it goes silent or breaks. A notice lost costs latency, never an event: the
fan-out's periodic check of its watched tables catches up after any gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable

import asyncpg
import structlog

CHANNEL = "table_events"
LISTEN_CHECK_S = 5.0
"""The listening connection must answer a query this fast, or it is replaced."""
NOTIFY_ITEMS = 150
"""Tables per notification: a payload stays under PostgreSQL's 8,000 bytes."""
log = structlog.get_logger(__name__)
FAULTS = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)
"""What a lost or cut database connection raises; InternalClientError comes from a
connection cut mid-query (MagicStack/asyncpg#784) and must not end the fan-out."""


class Notices:
    """This replica's side: what it tells after its commits, and what it hears."""

    def __init__(
        self,
        pool: asyncpg.Pool,
        dsn: str,
        heard: Callable[[uuid.UUID, int], None],
        *,
        poll_interval: float,
        listen_check_s: float = LISTEN_CHECK_S,
    ) -> None:
        self._pool = pool
        self._dsn = dsn
        self._heard = heard
        self._poll_interval = poll_interval
        self._listen_check_s = listen_check_s
        self._outbox: dict[uuid.UUID, int] = {}
        self._flush_wanted = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.connected = asyncio.Event()
        """The listening connection is up."""
        self.reached_at = time.monotonic()
        """When the listening connection last answered its check."""

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._listen(), name="fanout"),
            asyncio.create_task(self._notify_loop(), name="notifier"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._flush()  # the last commits' news, for the other replicas

    # --- telling -------------------------------------------------------------------

    def moved(self, table_id: uuid.UUID, seq: int) -> None:
        """The table reached ``seq`` here: the others are told at the next flush."""
        self._outbox[table_id] = max(seq, self._outbox.get(table_id, 0))
        self._flush_wanted.set()

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
        except FAULTS as error:
            # The other replicas' periodic check of their watched tables catches up.
            log.warning("notify_failed", tables=len(items), error=str(error))

    # --- hearing -------------------------------------------------------------------

    def _notified(self, _con: object, _pid: int, _channel: str, payload: object) -> None:
        for item in str(payload).split(","):
            table_text, _, seq_text = item.partition(":")
            try:
                table_id, seq = uuid.UUID(table_text), int(seq_text)
            except ValueError:
                continue
            self._heard(table_id, seq)

    async def _listen(self) -> None:
        backoff = 0.1
        while True:
            try:
                con = await asyncpg.connect(self._dsn)
            except FAULTS as error:
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
                    self.reached_at = time.monotonic()
            except FAULTS as error:
                log.warning("fanout_connection_lost", error=str(error))
            finally:
                self.connected.clear()
                with contextlib.suppress(Exception):
                    await con.close(timeout=1)
