"""How a waiting stream learns that its ticket changed: a NOTIFY on one channel
names the tickets, and one LISTEN per replica wakes their streams. Also how the
streams take turns at their progress messages."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import uuid
from typing import Any

from services.common.db import Connection, Pool

CHANNEL = "tickets"
NOTIFY_CHUNK = 150
"""Ticket ids per NOTIFY payload (37 bytes each): well under PostgreSQL's 8,000-byte cap."""


async def notify(db: Connection | Pool, ticket_ids: list[uuid.UUID]) -> None:
    if ticket_ids:
        # PostgreSQL refuses payloads of 8,000 bytes or more: one NOTIFY per chunk.
        ids = [str(t) for t in ticket_ids]
        payloads = [",".join(ids[i : i + NOTIFY_CHUNK]) for i in range(0, len(ids), NOTIFY_CHUNK)]
        await db.execute("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", CHANNEL, payloads)


class Wake(asyncio.Event):
    """Set when a waiting stream has something to do: its ticket may have changed
    (`changed`: it reads the ticket), or its turn for a progress message came."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = False


class Wakeups:
    """One LISTEN per replica: wakes the streams whose tickets changed; and their
    turns for progress, one after the other (see `nudge`)."""

    def __init__(self) -> None:
        self._events: dict[uuid.UUID, Wake] = {}
        self._turns: collections.deque[uuid.UUID] = collections.deque()
        """The watched tickets in the order of their next progress turn (ended
        ones are dropped when their turn comes)."""

    def listener(self, _con: object, _pid: int, _channel: str, payload: object) -> None:
        for text in str(payload).split(","):
            with contextlib.suppress(ValueError):
                event = self._events.get(uuid.UUID(text))
                if event is not None:
                    event.changed = True
                    event.set()

    @contextlib.contextmanager
    def watch(self, ticket_id: uuid.UUID) -> Any:
        event = self._events.get(ticket_id)
        if event is None:
            event = self._events[ticket_id] = Wake()
            self._turns.append(ticket_id)
        try:
            yield event
        finally:
            self._events.pop(ticket_id, None)

    def watched(self) -> list[uuid.UUID]:
        return list(self._events)

    def count(self) -> int:
        return len(self._events)

    def wake(self, ticket_ids: list[uuid.UUID]) -> None:
        """These tickets may have changed: their streams read them."""
        for ticket_id in ticket_ids:
            event = self._events.get(ticket_id)
            if event is not None:
                event.changed = True
                event.set()

    def nudge(self, most: int) -> int:
        """Wake the next ``most`` streams in turn for a progress message (the
        others wait for a later call, in the order they came); how many woke."""
        woken = 0
        for _ in range(len(self._turns)):
            if woken >= most:
                break
            ticket_id = self._turns.popleft()
            event = self._events.get(ticket_id)
            if event is None:
                continue  # its stream ended: it leaves the turns
            self._turns.append(ticket_id)
            event.set()
            woken += 1
        return woken
