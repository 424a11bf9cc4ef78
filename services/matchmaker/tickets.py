"""Tickets and matches in PostgreSQL: the matchmaker's only state."""

from __future__ import annotations

import asyncio
import json
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from services.common import metrics
from services.common.db import Connection, Pool
from services.common.pb.rummy.v1 import table_pb2
from services.game.options import TARGET_200
from services.game.rules.ruleset import PRESETS

from .matching import Waiting

CHANNEL = "tickets"
INVITE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
LIVE_INVITE_INDEX = "tickets_live_invite_idx"
"""The unique index that keeps waiting private tables' codes apart."""
"""No 0/O or 1/I: codes are read aloud and typed on phones."""

LIVE = ("queued", "matching")
NOTIFY_CHUNK = 150
"""Ticket ids per NOTIFY payload (37 bytes each): well under PostgreSQL's 8,000-byte cap."""


class AlreadyQueued(Exception):
    def __init__(self, ticket_id: str) -> None:
        super().__init__(ticket_id)
        self.ticket_id = ticket_id


@dataclass(frozen=True, slots=True)
class TicketRow:
    id: uuid.UUID
    player_id: str
    table_size: int
    ruleset: str
    options: dict[str, int]
    state: str
    invite_code: str | None
    table_id: uuid.UUID | None
    seat: int | None
    seated: int | None
    end_message: str
    created_at: datetime
    expires_at: datetime
    family: str

    @classmethod
    def of(cls, r: asyncpg.Record) -> TicketRow:
        return cls(
            r["id"],
            r["player_id"],
            r["table_size"],
            r["ruleset"],
            json.loads(r["options"]),
            r["state"],
            r["invite_code"],
            r["table_id"],
            r["seat"],
            r["seated"],
            r["end_message"],
            r["created_at"],
            r["expires_at"],
            r["family"],
        )


_COLUMNS = (
    "id, player_id, table_size, ruleset, options, state, invite_code, table_id, seat,"
    " seated, end_message, created_at, expires_at, family"
)


def options_message(options: dict[str, Any]) -> table_pb2.TableOptions:
    """The stored effective options as the API carries them."""
    return table_pb2.TableOptions(
        turn_timer_ms=options.get("turn_timer_ms", 0),
        turn_cap=options.get("turn_cap", 0),
        rounds=options.get("rounds", 0),
        elimination_cap=options.get("elimination_cap", 0),
        opening_threshold=options.get("opening_threshold", 0),
        to_200=options.get("target_score", 0) == TARGET_200,
        buy_backs=options.get("buy_backs", 0),
        claim_window_ms=options.get("claim_window_ms", 0),
        contracts=[
            table_pb2.Contract(
                groups=c["groups"], runs=c["runs"], no_final_discard=c["no_final_discard"]
            )
            for c in options.get("contracts", ())
        ],
    )


def new_invite_code() -> str:
    return "".join(secrets.choice(INVITE_ALPHABET) for _ in range(6))


async def seated_at(db: Connection | Pool, player_id: str) -> uuid.UUID | None:
    """The unfinished table this player sits at (and has not left), if any."""
    value: uuid.UUID | None = await db.fetchval(
        "SELECT s.table_id FROM table_seats s JOIN tables t ON t.id = s.table_id"
        " WHERE s.player_id = $1 AND s.left_at IS NULL AND t.status = 'active' LIMIT 1",
        player_id,
    )
    return value


async def insert(
    con: Connection,
    *,
    player_id: str,
    display_name: str,
    table_size: int,
    ruleset: str,
    options: dict[str, int],
    family: str,
    mode: str,
    rating: float,
    ttl_s: float,
    invite_code: str | None = None,
    is_host: bool = False,
    accept_smaller_ms: int = 0,
    fill_bots_ms: int = 0,
    replace: bool = False,
    ticket_id: uuid.UUID | None = None,
) -> TicketRow:
    """Queue a ticket; `AlreadyQueued` names the live one unless ``replace``."""
    values = (
        ticket_id or uuid.uuid4(),
        player_id,
        display_name,
        table_size,
        ruleset,
        json.dumps(options),
        family,
        mode,
        rating,
        invite_code,
        is_host,
        accept_smaller_ms,
        fill_bots_ms,
        ttl_s,
    )
    if not replace:
        # The common case in one statement: the unique index on live tickets
        # decides, whatever concurrent Enqueue calls of the same player do.
        for _ in range(3):
            row = await con.fetchrow(
                f"{_INSERT} ON CONFLICT (player_id) WHERE state IN ('queued', 'matching')"
                f" DO NOTHING RETURNING {_COLUMNS}",
                *values,
            )
            if row is not None:
                return TicketRow.of(row)
            live_id = await _live(con, player_id)
            if live_id is not None:
                raise AlreadyQueued(str(live_id))
            # The live ticket ended in between: try again.
        raise AlreadyQueued("")
    async with con.transaction():
        live = await con.fetchrow(
            "SELECT id, state FROM tickets WHERE player_id = $1 AND state = ANY($2::text[])"
            " FOR UPDATE",
            player_id,
            list(LIVE),
        )
        if live is not None:
            if live["state"] != "queued":
                raise AlreadyQueued(str(live["id"]))
            replaced = await con.fetchrow(
                "UPDATE tickets SET state = 'cancelled', ended_at = now(),"
                " end_message = 'Replaced by a new ticket.' WHERE id = $1"
                f" RETURNING {ENDED}, invite_code, is_host",
                live["id"],
            )
            assert replaced is not None  # locked above
            record_ended([replaced], "cancelled")
            ended = [live["id"]]
            if replaced["is_host"] and replaced["invite_code"]:
                ended += await _close_private(con, [replaced["invite_code"]], HOST_LEFT)
            # Delivered at commit: the replaced ticket's stream ends at once.
            await notify(con, ended)
        try:
            # A savepoint: when a concurrent Enqueue of the same player wins the
            # unique index, the lookup below still runs in this transaction.
            async with con.transaction():
                row = await con.fetchrow(f"{_INSERT} RETURNING {_COLUMNS}", *values)
        except asyncpg.UniqueViolationError:
            raise AlreadyQueued(str(await _live(con, player_id))) from None
    assert row is not None
    return TicketRow.of(row)


_INSERT = (
    "INSERT INTO tickets (id, player_id, display_name, table_size, ruleset, options, family,"
    " mode, rating, invite_code, is_host, accept_smaller_ms, fill_bots_ms, expires_at)"
    " VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12, $13,"
    " now() + make_interval(secs => $14))"
)


_QUEUE_AT_ONCE = (
    "INSERT INTO tickets (id, player_id, display_name, table_size, ruleset, options, family,"
    " mode, rating, invite_code, is_host, accept_smaller_ms, fill_bots_ms, expires_at)"
    " SELECT $1, $2, coalesce(p.display_name, ''), $3, $4, $5::jsonb, $6, $7,"
    " coalesce(p.rating, 1500), $8, $9, $10, $11, now() + make_interval(secs => $12)"
    " FROM (SELECT 1) AS one LEFT JOIN players p ON p.id = $2"
    " WHERE NOT EXISTS (SELECT 1 FROM table_seats s JOIN tables t ON t.id = s.table_id"
    " WHERE s.player_id = $2 AND s.left_at IS NULL AND t.status = 'active')"
    " ON CONFLICT (player_id) WHERE state IN ('queued', 'matching') DO NOTHING"
    f" RETURNING {_COLUMNS}"
)


async def queue_at_once(
    con: Connection,
    *,
    player_id: str,
    table_size: int,
    ruleset: str,
    options: dict[str, int],
    family: str,
    mode: str,
    ttl_s: float,
    invite_code: str | None = None,
    is_host: bool = False,
    accept_smaller_ms: int = 0,
    fill_bots_ms: int = 0,
    ticket_id: uuid.UUID | None = None,
) -> TicketRow | None:
    """The common case of queueing, in one statement: the player's name and rating
    are read in it, and no ticket is made for a player seated at an unfinished
    table or holding a live ticket. None then: the caller finds out which."""
    row = await con.fetchrow(
        _QUEUE_AT_ONCE,
        ticket_id or uuid.uuid4(),
        player_id,
        table_size,
        ruleset,
        json.dumps(options),
        family,
        mode,
        invite_code,
        is_host,
        accept_smaller_ms,
        fill_bots_ms,
        ttl_s,
    )
    return None if row is None else TicketRow.of(row)


async def lock_private(con: Connection, invite_code: str) -> tuple[int, int] | None:
    """Lock the host's ticket of a waiting private table, until ``con``'s
    transaction ends: the seats taken and the table's size; None if no table waits."""
    size = await con.fetchval(
        "SELECT table_size FROM tickets WHERE invite_code = $1 AND is_host AND state = 'queued'"
        " FOR UPDATE",
        invite_code,
    )
    if size is None:
        return None
    # A statement of its own: it sees the seats taken by whoever held the lock before.
    taken = await con.fetchval(
        "SELECT count(*) FROM tickets WHERE invite_code = $1 AND state = 'queued'", invite_code
    )
    return int(taken), int(size)


async def _live(con: Connection, player_id: str) -> uuid.UUID | None:
    value: uuid.UUID | None = await con.fetchval(
        "SELECT id FROM tickets WHERE player_id = $1 AND state = ANY($2::text[])",
        player_id,
        list(LIVE),
    )
    return value


async def get(db: Connection | Pool, ticket_id: uuid.UUID) -> TicketRow | None:
    row = await db.fetchrow(f"SELECT {_COLUMNS} FROM tickets WHERE id = $1", ticket_id)
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
                f"SELECT {_COLUMNS} FROM tickets WHERE id = ANY($1::uuid[])", list(wanted)
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


ENDED = (
    "id, table_size, ruleset, invite_code IS NOT NULL AS private,"
    " extract(epoch from ended_at - created_at) AS waited"
)
"""What `record_ended` reads of a ticket that just ended."""
HOST_LEFT = "The host closed the private table."
LEFT = "You left the queue."
HOST_EXPIRED = "The private table was not full in time: its host's ticket expired."


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


async def cancel_private(db: Connection | Pool, invite_code: str, message: str) -> None:
    await notify(db, await _close_private(db, [invite_code], message))


async def _close_private(
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


async def notify(db: Connection | Pool, ticket_ids: list[uuid.UUID]) -> None:
    if ticket_ids:
        # PostgreSQL refuses payloads of 8,000 bytes or more: one NOTIFY per chunk.
        ids = [str(t) for t in ticket_ids]
        payloads = [",".join(ids[i : i + NOTIFY_CHUNK]) for i in range(0, len(ids), NOTIFY_CHUNK)]
        await db.execute("SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p", CHANNEL, payloads)


@dataclass(frozen=True, slots=True)
class Queue:
    """Queued tickets locked by this replica, and what a table needs to know of them."""

    waiting: list[Waiting]
    now_ms: int
    names: dict[str, str]
    """Ticket id -> display name."""
    games: dict[str, tuple[str, dict[str, int]]]
    """Family -> (rule set, options)."""
    last: Place | None = None
    """Where the claim stopped, when it took all it could (more may wait after)."""


@dataclass(frozen=True, slots=True)
class Place:
    """A ticket's place in the queue: its creation time, then its id."""

    created_at: datetime
    ticket_id: uuid.UUID


async def queued(con: Connection, limit: int, after: Place | None = None) -> Queue:
    """Lock up to ``limit`` queued tickets, oldest first (from ``after`` on, if
    given); others' locks are skipped. Also the database clock."""
    rows = await con.fetch(
        "SELECT id, player_id, display_name, family, table_size, rating, mode, invite_code,"
        " is_host, accept_smaller_ms, fill_bots_ms, ruleset, options, created_at,"
        " (extract(epoch from created_at) * 1000)::bigint AS created_ms"
        " FROM tickets WHERE state = 'queued' AND expires_at > now()"
        " AND ($2::timestamptz IS NULL OR (created_at, id) > ($2, $3::uuid))"
        " ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED",
        limit,
        after.created_at if after else None,
        after.ticket_id if after else None,
    )
    now_ms: int = await con.fetchval("SELECT (extract(epoch from now()) * 1000)::bigint")
    waiting = [
        Waiting(
            str(r["id"]),
            r["player_id"],
            r["family"],
            r["table_size"],
            r["created_ms"],
            r["rating"],
            r["mode"] == "rating",
            r["accept_smaller_ms"],
            r["fill_bots_ms"],
            r["invite_code"] is not None,
            r["is_host"],
        )
        for r in rows
    ]
    names = {str(r["id"]): r["display_name"] for r in rows}
    games = {r["family"]: (r["ruleset"], json.loads(r["options"])) for r in rows}
    last = Place(rows[-1]["created_at"], rows[-1]["id"]) if len(rows) == limit else None
    return Queue(waiting, now_ms, names, games, last)


@dataclass(frozen=True, slots=True)
class Standing:
    """Where waiting tickets stand, read at one moment."""

    waiting: dict[tuple[str, int], int]
    """Queued tickets by queue: (family, table size)."""
    positions: dict[uuid.UUID, int]
    """1-based place of the tickets asked about, in FIFO public queues."""


async def standing(db: Connection | Pool, ticket_ids: list[uuid.UUID]) -> Standing:
    rows = await db.fetch(
        "SELECT family, table_size, count(*) AS n FROM tickets WHERE state = 'queued'"
        " GROUP BY family, table_size"
    )
    places = await db.fetch(
        "SELECT id, place FROM (SELECT id, row_number() OVER"
        " (PARTITION BY family, table_size ORDER BY created_at) AS place FROM tickets"
        " WHERE state = 'queued' AND mode = 'fifo' AND invite_code IS NULL) AS q"
        " WHERE id = ANY($1::uuid[])",
        ticket_ids,
    )
    return Standing(
        {(r["family"], r["table_size"]): r["n"] for r in rows},
        {r["id"]: r["place"] for r in places},
    )


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
        ids += await _close_private(db, hosts, HOST_EXPIRED)
    await notify(db, ids)
    return ids


def record_ended(rows: Sequence[asyncpg.Record], outcome: str) -> None:
    """Metrics of tickets that just ended (rows as `ENDED` reads them)."""
    for r in rows:
        queue = metrics.queue_label(r["table_size"], r["ruleset"], private=r["private"])
        metrics.TICKETS_ENDED.labels(queue, outcome).inc()
        metrics.MATCH_WAIT.labels(queue, outcome).observe(float(r["waited"]))


async def record_depth(db: Connection | Pool) -> None:
    """Queue depth by queue: every replica reports the whole database's queues."""
    rows = await db.fetch(
        "SELECT table_size, ruleset, invite_code IS NOT NULL AS private, count(*) AS n"
        " FROM tickets WHERE state = 'queued' GROUP BY 1, 2, 3"
    )
    seen = set()
    for r in rows:
        queue = metrics.queue_label(r["table_size"], r["ruleset"], private=r["private"])
        metrics.QUEUE_DEPTH.labels(queue).set(r["n"])
        seen.add(queue)
    for size in (2, 3, 4):
        for ruleset in PRESETS:
            for private in (False, True):
                queue = metrics.queue_label(size, ruleset, private=private)
                if queue not in seen:
                    metrics.QUEUE_DEPTH.labels(queue).set(0)
