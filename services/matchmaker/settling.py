"""What becomes of a match's tickets once its table is made, or cannot be: seated
at it, or ended saying why. Each step runs in the caller's transaction, which
holds the matches locked, and gives the tickets whose streams are to be woken."""

from __future__ import annotations

import uuid

from services.common import metrics
from services.common.db import Connection

from . import endings
from .aftercommit import after_commit


async def made(con: Connection, table_ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Those of these tables that exist: made by an earlier call whose answer was
    lost, or the one the game service found already made (ALREADY_EXISTS)."""
    if not table_ids:
        return set()
    rows = await con.fetch("SELECT id FROM tables WHERE id = ANY($1::uuid[])", table_ids)
    return {r["id"] for r in rows}


async def seat(con: Connection, table_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    """The tables exist: their matches are done and their tickets `matched`."""
    if not table_ids:
        return []
    await con.execute(
        "UPDATE matches SET state = 'created', done_at = now() WHERE table_id = ANY($1::uuid[])",
        table_ids,
    )
    # The clock now, not the transaction's start: the wait includes the
    # table's creation.
    rows = await con.fetch(
        "UPDATE tickets SET state = 'matched', ended_at = clock_timestamp()"
        " WHERE table_id = ANY($1::uuid[]) AND state = 'matching'"
        f" RETURNING {endings.ENDED}, table_id, seated",
        table_ids,
    )
    endings.record_ended(rows, "matched")
    tables = {r["table_id"]: r for r in rows}
    queues = [
        metrics.queue_label(r["seated"], r["ruleset"], private=r["private"])
        for r in tables.values()
    ]

    def count() -> None:
        for queue in queues:
            metrics.MATCHES.labels(queue).inc()

    after_commit(count)
    return [r["id"] for r in rows]


async def end(con: Connection, table_ids: list[uuid.UUID], message: str) -> list[uuid.UUID]:
    """The tables will not be made: their matches failed, and their tickets end,
    `expired` with ``message``, or `cancelled` for those who asked to leave
    meanwhile. None goes back to the queue: the same table would be formed again
    (and refused again) on every pass, holding its players up for good."""
    if not table_ids:
        return []
    await con.execute(
        "UPDATE matches SET state = 'failed', done_at = now() WHERE table_id = ANY($1::uuid[])",
        table_ids,
    )
    rows = await con.fetch(
        "UPDATE tickets SET state = CASE WHEN leave_requested THEN 'cancelled'"
        " ELSE 'expired' END, ended_at = clock_timestamp(),"
        " end_message = CASE WHEN leave_requested THEN $2 ELSE $3 END"
        " WHERE table_id = ANY($1::uuid[]) AND state = 'matching'"
        f" RETURNING {endings.ENDED}, state, invite_code, is_host",
        table_ids,
        endings.LEFT,
        message,
    )
    for outcome in ("cancelled", "expired"):
        endings.record_ended([r for r in rows if r["state"] == outcome], outcome)
    woken = [r["id"] for r in rows]
    # A private table ends with its host's ticket: nobody may be left waiting
    # under its code for a table nobody hosts.
    for outcome, why in (("cancelled", endings.HOST_LEFT), ("expired", message)):
        codes = [r["invite_code"] for r in rows if r["is_host"] and r["state"] == outcome]
        if codes:
            woken += await endings.close_private(con, codes, why)
    return woken
