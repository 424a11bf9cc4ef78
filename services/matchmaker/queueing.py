"""Queueing a ticket: public queues and private tables, one live ticket a player."""

from __future__ import annotations

import json
import secrets
import uuid

import asyncpg

from services.common.db import Connection, Pool
from services.common.rating import DEFAULT_DEVIATION, DEFAULT_RATING

from .aftercommit import transaction
from .endings import ENDED, HOST_LEFT, close_private, record_ended
from .tickets import COLUMNS, TicketRow
from .wakeups import notify

INVITE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""No 0/O or 1/I: codes are read aloud and typed on phones."""
LIVE_INVITE_INDEX = "tickets_live_invite_idx"
"""The unique index that keeps waiting private tables' codes apart."""
LIVE = ("queued", "matching")
REPLACING = int.from_bytes(b"rplc")
"""The first key of the transaction lock one player's replacing Enqueue calls take
in turn (the second: a hash of the player's id)."""
REPLACE_ATTEMPTS = 3
"""Tickets a replacing call replaces at most: the live one, then any that plain
Enqueue calls of the same player stored meanwhile."""
STARTED_RECENTLY_S = 600.0
"""How long after a private table started its code still answers that the table
is full (a friend arriving late), and not that no table has that code."""


class AlreadyQueued(Exception):
    def __init__(self, ticket_id: str) -> None:
        super().__init__(ticket_id)
        self.ticket_id = ticket_id


class BeingSeated(AlreadyQueued):
    """The live ticket's table is being set up: it can no longer be replaced."""


class AlreadySeated(Exception):
    def __init__(self, table_id: uuid.UUID) -> None:
        super().__init__(str(table_id))
        self.table_id = table_id


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
    rating_deviation: float = DEFAULT_DEVIATION,
    ttl_s: float,
    invite_code: str | None = None,
    is_host: bool = False,
    accept_smaller_ms: int = 0,
    fill_bots_ms: int = 0,
    bot_level: str = "normal",
    replace: bool = False,
    ticket_id: uuid.UUID | None = None,
    trace_parent: str | None = None,
) -> TicketRow:
    """Queue a ticket. `AlreadyQueued` names the live one unless ``replace``;
    with ``replace``, a live one whose table is being set up is `BeingSeated`.
    `AlreadySeated` names the unfinished table the player sits at."""
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
        bot_level,
        trace_parent,
        rating_deviation,
    )
    async with transaction(con):
        row = await (_replace if replace else _add)(con, player_id, values)
        # The live ticket this one waited for (on the unique index, or the lock
        # in `_replace`) may have ended because its table was made: the seat,
        # committed before that ticket ended, shows to this later statement. The
        # caller's earlier look at the seats came too soon to see it.
        seated = await seated_at(con, player_id)
        if seated is not None:
            raise AlreadySeated(seated)
    return row


async def _add(con: Connection, player_id: str, values: tuple[object, ...]) -> TicketRow:
    # The unique index on live tickets decides, whatever concurrent Enqueue
    # calls of the same player do.
    for _ in range(3):
        row = await con.fetchrow(
            f"{_INSERT} ON CONFLICT (player_id) WHERE state IN ('queued', 'matching')"
            f" DO NOTHING RETURNING {COLUMNS}",
            *values,
        )
        if row is not None:
            return TicketRow.of(row)
        live_id = await _live(con, player_id)
        if live_id is not None:
            raise AlreadyQueued(str(live_id))
        # The live ticket ended in between: try again.
    raise AlreadyQueued("")


async def _replace(con: Connection, player_id: str, values: tuple[object, ...]) -> TicketRow:
    # The player's replacing calls take turns: each one's statements see the
    # ticket the one before it stored, and it replaces that ticket in turn, so
    # calls at once settle as calls one after the other would: every one queues,
    # and the last one's ticket is the one left.
    await con.execute("SELECT pg_advisory_xact_lock($1, hashtext($2))", REPLACING, player_id)
    for _ in range(REPLACE_ATTEMPTS):
        await _end_live(con, player_id)
        try:
            # A savepoint: when a plain Enqueue of the same player wins the unique
            # index meanwhile, this transaction goes on, and replaces that ticket too.
            async with con.transaction():
                row = await con.fetchrow(f"{_INSERT} RETURNING {COLUMNS}", *values)
        except asyncpg.UniqueViolationError:
            continue
        assert row is not None
        return TicketRow.of(row)
    raise AlreadyQueued(str(await _live(con, player_id)))


async def _end_live(con: Connection, player_id: str) -> None:
    """Cancel the player's live ticket, if any; `BeingSeated` if its table is being
    set up. Its stream is told at commit."""
    live = await con.fetchrow(
        "SELECT id, state FROM tickets WHERE player_id = $1 AND state = ANY($2::text[]) FOR UPDATE",
        player_id,
        list(LIVE),
    )
    if live is None:
        return
    if live["state"] != "queued":
        raise BeingSeated(str(live["id"]))
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
        ended += await close_private(con, [replaced["invite_code"]], HOST_LEFT)
    # Delivered at commit: the replaced ticket's stream ends at once.
    await notify(con, ended)


PROFILE = (
    "SELECT p.display_name, coalesce(s.rating, p.rating) AS rating,"
    " coalesce(s.deviation, p.rating_deviation) AS rating_deviation"
    " FROM players p LEFT JOIN player_standings s ON s.player_id = p.id AND s.ruleset = $2"
    " WHERE p.id = $1"
)
"""A player's name and rating in a rule set: their standing's there (a rating is a
rule set's own, `services.game.results`), else the one carried over for them."""


_INSERT = (
    "INSERT INTO tickets (id, player_id, display_name, table_size, ruleset, options, family,"
    " mode, rating, invite_code, is_host, accept_smaller_ms, fill_bots_ms, expires_at,"
    " bot_level, trace_parent, rating_deviation) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7,"
    " $8, $9, $10, $11, $12, $13, now() + make_interval(secs => $14), $15, $16, $17)"
)


_QUEUE_AT_ONCE = (
    "INSERT INTO tickets (id, player_id, display_name, table_size, ruleset, options, family,"
    " mode, rating, invite_code, is_host, accept_smaller_ms, fill_bots_ms, expires_at,"
    " bot_level, trace_parent, rating_deviation) SELECT $1, $2, coalesce(p.display_name, ''),"
    " $3, $4, $5::jsonb, $6, $7, coalesce(s.rating, p.rating, $15), $8, $9, $10, $11,"
    " now() + make_interval(secs => $12), $13, $14,"
    " coalesce(s.deviation, p.rating_deviation, $16)"
    " FROM (SELECT 1) AS one LEFT JOIN players p ON p.id = $2"
    " LEFT JOIN player_standings s ON s.player_id = $2 AND s.ruleset = $4"
    " WHERE NOT EXISTS (SELECT 1 FROM table_seats s JOIN tables t ON t.id = s.table_id"
    " WHERE s.player_id = $2 AND s.left_at IS NULL AND t.status = 'active')"
    " AND NOT EXISTS (SELECT 1 FROM tickets WHERE player_id = $2"
    " AND state IN ('queued', 'matching'))"
    " ON CONFLICT (player_id) WHERE state IN ('queued', 'matching') DO NOTHING"
    f" RETURNING {COLUMNS}"
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
    bot_level: str = "normal",
    ticket_id: uuid.UUID | None = None,
    trace_parent: str | None = None,
) -> TicketRow | None:
    """The common case of queueing, in one statement: the player's name and rating
    are read in it, and no ticket is made for a player seated at an unfinished
    table or holding a live ticket. None then: the caller finds out which.

    A live ticket this statement sees also means None, even if it ends before
    the insert reaches the unique index: its table may have been made after
    this statement looked at the seats, so `insert` looks again."""
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
        bot_level,
        trace_parent,
        DEFAULT_RATING,
        DEFAULT_DEVIATION,
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


async def started_private(db: Connection | Pool, invite_code: str) -> bool:
    """Whether the latest private table with this code has started: being set up,
    or seated within `STARTED_RECENTLY_S`. (A closed, expired or never-made one
    has not.)"""
    started: bool | None = await db.fetchval(
        "SELECT state = 'matching' OR (state = 'matched'"
        " AND ended_at > now() - make_interval(secs => $2))"
        " FROM tickets WHERE invite_code = $1 AND is_host ORDER BY created_at DESC LIMIT 1",
        invite_code,
        STARTED_RECENTLY_S,
    )
    return bool(started)


async def _live(con: Connection, player_id: str) -> uuid.UUID | None:
    value: uuid.UUID | None = await con.fetchval(
        "SELECT id FROM tickets WHERE player_id = $1 AND state = ANY($2::text[])",
        player_id,
        list(LIVE),
    )
    return value
