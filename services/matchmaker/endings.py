"""Tickets ending without a table: cancelled, or expired; and the metrics of
every ticket that ends."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg

from services.common import metrics
from services.common.db import Connection, Pool

from .aftercommit import after_commit, transaction
from .wakeups import notify

ENDED = (
    "id, table_size, ruleset, invite_code IS NOT NULL AS private,"
    " extract(epoch from ended_at - created_at) AS waited"
)
"""What `record_ended` reads of a ticket that just ended."""
HOST_LEFT = "The host closed the private table."
LEFT = "You left the queue."
HOST_EXPIRED = "The private table was not full in time: its host's ticket expired."
UNREADABLE = "Your ticket could not be read after an update: please queue again."
HOST_UNREADABLE = "The private table could not be read after an update: please set it up again."


async def cancel(db: Connection | Pool, ticket_id: uuid.UUID, message: str) -> bool | None:
    """Cancel a queued ticket: True. A ticket whose table is being set up cannot
    be taken off it; the wish is kept (see `matcher`): None. An ended one: False."""
    done = await db.fetchrow(
        "UPDATE tickets SET state = 'cancelled', ended_at = now(), end_message = $2"
        f" WHERE id = $1 AND state = 'queued' RETURNING {ENDED}",
        ticket_id,
        message,
    )
    if done is not None:
        record_ended([done], "cancelled")
        await notify(db, [ticket_id])
        return True
    leaving = await db.fetchval(
        "UPDATE tickets SET leave_requested = true WHERE id = $1 AND state = 'matching'"
        " RETURNING true",
        ticket_id,
    )
    return None if leaving else False


async def cancel_private(pool: Pool, invite_code: str, message: str) -> bool:
    """Close a private table: True if its host's ticket was still queued (and is
    cancelled now); False if it was not, a claim having taken the table meanwhile,
    say (see `cancel` for what its host can still do).

    The host's ticket is locked first, in a statement of its own: a guest taking
    a seat at this moment (under that lock) is done by the time the table's
    tickets are cancelled, and is cancelled with them."""
    async with pool.acquire() as con, transaction(con):
        host = await con.fetchval(
            "SELECT id FROM tickets WHERE invite_code = $1 AND is_host AND state = 'queued'"
            " FOR UPDATE",
            invite_code,
        )
        if host is None:
            # The table is no longer waiting (taken by a claim, or closed): any
            # ticket still queued under this code is not this host's to end.
            return False
        await notify(con, await close_private(con, [invite_code], message))
        return True


async def close_private(
    db: Connection | Pool, invite_codes: list[str], message: str
) -> list[uuid.UUID]:
    """Cancel every queued ticket of these private tables; their ids, to notify."""
    rows = await db.fetch(
        "UPDATE tickets SET state = 'cancelled', ended_at = now(), end_message = $2"
        f" WHERE invite_code = ANY($1::text[]) AND state = 'queued' RETURNING {ENDED}",
        invite_codes,
        message,
    )
    record_ended(rows, "cancelled")
    return [r["id"] for r in rows]


async def expire(db: Connection | Pool) -> list[uuid.UUID]:
    """End the queued tickets past their lifetime, and the private tables whose
    host's ticket that was (nobody could join them any more)."""
    rows = await db.fetch(
        "UPDATE tickets SET state = 'expired', ended_at = now(),"
        " end_message = 'Nobody could be found in time: try again.'"
        " WHERE state = 'queued' AND expires_at <= now()"
        f" RETURNING {ENDED}, invite_code, is_host"
    )
    record_ended(rows, "expired")
    ids = [r["id"] for r in rows]
    hosts = [r["invite_code"] for r in rows if r["is_host"] and r["invite_code"]]
    if hosts:
        ids += await close_private(db, hosts, HOST_EXPIRED)
    await notify(db, ids)
    return ids


async def end_unreadable(con: Connection, ticket_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    """End queued tickets that cannot be judged (see `claim.queued`), and the
    private tables whose host's ticket is one of them; their ids, to notify."""
    rows = await con.fetch(
        "UPDATE tickets SET state = 'expired', ended_at = now(), end_message = $2"
        " WHERE id = ANY($1::uuid[]) AND state = 'queued'"
        f" RETURNING {ENDED}, invite_code, is_host",
        ticket_ids,
        UNREADABLE,
    )
    record_ended(rows, "expired")
    ids = [r["id"] for r in rows]
    hosts = [r["invite_code"] for r in rows if r["is_host"] and r["invite_code"]]
    if hosts:
        ids += await close_private(con, hosts, HOST_UNREADABLE)
    return ids


def record_ended(rows: Sequence[asyncpg.Record], outcome: str) -> None:
    """Metrics of tickets that just ended (rows as `ENDED` reads them), counted
    once their transaction commits."""
    ended = [
        (metrics.queue_label(r["table_size"], r["ruleset"], private=r["private"]), r["waited"])
        for r in rows
    ]

    def count() -> None:
        for queue, waited in ended:
            metrics.TICKETS_ENDED.labels(queue, outcome).inc()
            metrics.MATCH_WAIT.labels(queue, outcome).observe(float(waited))

    after_commit(count)
