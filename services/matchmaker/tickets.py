"""Tickets in PostgreSQL as the matchmaker reads them: the row, and reads of
single tickets."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg

from services.common.db import Connection, Pool


@dataclass(frozen=True, slots=True)
class TicketRow:
    id: uuid.UUID
    player_id: str
    table_size: int
    ruleset: str
    options: str
    """As stored: JSON text (see `messages.stored_options`)."""
    state: str
    invite_code: str | None
    table_id: uuid.UUID | None
    seat: int | None
    seated: int | None
    end_message: str
    created_at: datetime
    expires_at: datetime
    family: str
    bot_level: str

    @classmethod
    def of(cls, r: asyncpg.Record) -> TicketRow:
        return cls(
            r["id"],
            r["player_id"],
            r["table_size"],
            r["ruleset"],
            r["options"],
            r["state"],
            r["invite_code"],
            r["table_id"],
            r["seat"],
            r["seated"],
            r["end_message"],
            r["created_at"],
            r["expires_at"],
            r["family"],
            r["bot_level"],
        )


COLUMNS = (
    "id, player_id, table_size, ruleset, options, state, invite_code, table_id, seat,"
    " seated, end_message, created_at, expires_at, family, bot_level"
)
"""What a `TicketRow` is read from."""


async def get(db: Connection | Pool, ticket_id: uuid.UUID) -> TicketRow | None:
    row = await db.fetchrow(f"SELECT {COLUMNS} FROM tickets WHERE id = $1", ticket_id)
    return TicketRow.of(row) if row is not None else None


class Reads:
    """Reads of single tickets made at about the same time, as one query.

    A batch of matches wakes hundreds of streams at once, each wanting its own
    ticket: they share a query per turn of the event loop instead of one each."""

    def __init__(self, pool: Pool) -> None:
        self._pool = pool
        self._wanted: dict[uuid.UUID, list[asyncio.Future[TicketRow | None]]] = {}
        self._flush: asyncio.Task[None] | None = None
        self._reading: set[asyncio.Task[None]] = set()

    async def get(self, ticket_id: uuid.UUID) -> TicketRow | None:
        answer: asyncio.Future[TicketRow | None] = asyncio.get_running_loop().create_future()
        self._wanted.setdefault(ticket_id, []).append(answer)
        if self._flush is None:
            self._flush = asyncio.create_task(self._read())
            self._reading.add(self._flush)
            self._flush.add_done_callback(self._reading.discard)
        return await answer

    async def _read(self) -> None:
        await asyncio.sleep(0)  # the other streams woken with this one join in
        wanted, self._wanted, self._flush = self._wanted, {}, None
        answers = [a for waiting in wanted.values() for a in waiting]
        try:
            rows = await self._pool.fetch(
                f"SELECT {COLUMNS} FROM tickets WHERE id = ANY($1::uuid[])", list(wanted)
            )
        except asyncio.CancelledError:
            for answer in answers:
                answer.cancel()
            raise
        except Exception as error:
            for answer in answers:
                if not answer.done():
                    answer.set_exception(error)
            return
        found = {r["id"]: TicketRow.of(r) for r in rows}
        for ticket_id, waiting in wanted.items():
            for answer in waiting:
                if not answer.done():
                    answer.set_result(found.get(ticket_id))
