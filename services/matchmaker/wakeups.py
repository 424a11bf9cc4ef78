"""How a waiting stream learns that its ticket changed: a NOTIFY on one channel
names the tickets, and one LISTEN per replica wakes their streams."""

from __future__ import annotations

import asyncio
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


class Wakeups:
    """One LISTEN per replica: wakes the streams whose tickets changed."""

    def __init__(self) -> None:
        self._events: dict[uuid.UUID, asyncio.Event] = {}

    def listener(self, _con: object, _pid: int, _channel: str, payload: object) -> None:
        for text in str(payload).split(","):
            with contextlib.suppress(ValueError):
                event = self._events.get(uuid.UUID(text))
                if event is not None:
                    event.set()

    @contextlib.contextmanager
    def watch(self, ticket_id: uuid.UUID) -> Any:
        event = self._events.setdefault(ticket_id, asyncio.Event())
        try:
            yield event
        finally:
            self._events.pop(ticket_id, None)

    def watched(self) -> list[uuid.UUID]:
        return list(self._events)

    def count(self) -> int:
        return len(self._events)

    def wake(self, ticket_ids: list[uuid.UUID]) -> None:
        for ticket_id in ticket_ids:
            event = self._events.get(ticket_id)
            if event is not None:
                event.set()
