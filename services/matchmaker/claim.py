"""The matching loop's claim: queued tickets locked for one replica, oldest first."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg

from services.common.db import Connection
from services.common.pb.rummy.v1 import table_pb2

from .matching import Waiting
from .messages import stored_options

Games = dict[str, tuple[str, table_pb2.TableOptions]]
"""Family -> (rule set, options)."""


@dataclass(frozen=True, slots=True)
class Queue:
    """Queued tickets locked by this replica, and what a table needs to know of them."""

    waiting: list[Waiting]
    now_ms: int
    names: dict[str, str]
    """Ticket id -> display name."""
    games: Games
    resume_after: Place | None = None
    """Where the next claim starts, when this one took all it could (more may
    wait after): halfway through it."""
    unreadable: tuple[uuid.UUID, ...] = ()
    """Locked tickets whose stored options this build cannot read (stored before
    an update): left out of `waiting`, for the claim to end."""
    traces: dict[str, str] = field(default_factory=dict)
    """Ticket id -> the trace context of the call that queued it (W3C
    traceparent), for the tickets queued while traces were on."""


@dataclass(frozen=True, slots=True)
class Place:
    """A ticket's place in the queue: its creation time, then its id."""

    created_at: datetime
    ticket_id: uuid.UUID


_STARTABLE_PRIVATE = (
    "SELECT invite_code FROM tickets WHERE state = 'queued' AND invite_code IS NOT NULL"
    " GROUP BY invite_code HAVING count(*) >= max(table_size) OR bool_or(is_host"
    " AND fill_bots_ms > 0 AND created_at + make_interval(secs => fill_bots_ms / 1000.0)"
    " <= now())"
)
"""Private tables that can start now: full, or their host's wait for bots is over
(as `matching` decides). The others are left out of a claim: thousands of tables
waiting for friends must not fill it and crowd out tickets that can be seated."""


_COLUMNS = (
    "id, player_id, display_name, family, table_size, rating, rating_deviation, mode,"
    " invite_code, is_host, accept_smaller_ms, fill_bots_ms, bot_level, ruleset, options,"
    " created_at, trace_parent,"
    " (extract(epoch from created_at) * 1000)::bigint AS created_ms"
)


async def queued(con: Connection, limit: int, after: Place | None = None) -> Queue:
    """Lock up to ``limit`` queued tickets, oldest first (from ``after`` on, if
    given), but for private tables that cannot start yet; others' locks are
    skipped. A private table comes whole or not at all (see `_whole_tables`).
    Also the database clock."""
    rows = await con.fetch(
        f"SELECT {_COLUMNS} FROM tickets WHERE state = 'queued' AND expires_at > now()"
        f" AND (invite_code IS NULL OR invite_code IN ({_STARTABLE_PRIVATE}))"
        " AND ($2::timestamptz IS NULL OR (created_at, id) > ($2, $3::uuid))"
        " ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED",
        limit,
        after.created_at if after else None,
        after.ticket_id if after else None,
    )
    # The next window starts halfway through this one: tickets up to half a
    # claim apart are looked at together in one window or the next.
    half = rows[max(0, limit // 2 - 1)] if rows and len(rows) == limit else None
    resume_after = Place(half["created_at"], half["id"]) if half is not None else None
    rows, games, unreadable = _readable(await _whole_tables(con, rows))
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
            r["bot_level"],
            deviation=r["rating_deviation"],
        )
        for r in rows
    ]
    names = {str(r["id"]): r["display_name"] for r in rows}
    traces = {str(r["id"]): r["trace_parent"] for r in rows if r["trace_parent"]}
    return Queue(waiting, now_ms, names, games, resume_after, unreadable, traces)


def _readable(
    rows: list[asyncpg.Record],
) -> tuple[list[asyncpg.Record], Games, tuple[uuid.UUID, ...]]:
    """The rows whose options can be read, their families' games, and the ids of
    the others. A ticket stored before an update changed what options may hold
    would otherwise fail every claim that takes it, and no ticket would be
    seated."""
    kept: list[asyncpg.Record] = []
    games: Games = {}
    unreadable: list[uuid.UUID] = []
    for r in rows:
        options = stored_options(r["options"])
        if options is None:
            unreadable.append(r["id"])
            continue
        kept.append(r)
        games.setdefault(r["family"], (r["ruleset"], options))
    return kept, games, tuple(unreadable)


async def _whole_tables(con: Connection, rows: list[asyncpg.Record]) -> list[asyncpg.Record]:
    """``rows`` with the rest of their private tables' tickets locked and added,
    but without the private tables of which another claim holds a ticket.

    A private table starts with the guests its claim holds, bots taking the other
    seats: a guest left out (locked by another replica's claim at this moment, or
    past this claim's limit) would be left waiting for a table that has gone. So
    the table's other tickets are locked here too (skipping others' locks: two
    claims never wait for each other), and the table is kept only if every queued
    ticket with its code is held; otherwise it waits for a later claim."""
    codes = sorted({r["invite_code"] for r in rows if r["invite_code"] is not None})
    if not codes:
        return rows
    rows = rows + await con.fetch(
        f"SELECT {_COLUMNS} FROM tickets WHERE invite_code = ANY($1::text[])"
        " AND state = 'queued' AND expires_at > now() AND id <> ALL($2::uuid[])"
        " FOR UPDATE SKIP LOCKED",
        codes,
        [r["id"] for r in rows],
    )
    # Another claim's locked tickets still read as queued here.
    waiting = {
        r["invite_code"]: r["n"]
        for r in await con.fetch(
            "SELECT invite_code, count(*) AS n FROM tickets WHERE invite_code = ANY($1::text[])"
            " AND state = 'queued' AND expires_at > now() GROUP BY invite_code",
            codes,
        )
    }
    held = Counter(r["invite_code"] for r in rows if r["invite_code"] is not None)
    return [
        r
        for r in rows
        if r["invite_code"] is None or held[r["invite_code"]] == waiting.get(r["invite_code"])
    ]
