"""What the operators read of the tables (`TableAdminService`): tables by state
and age, one table at a glance, and its log as a spectator was sent it. Reads
only: ending a table goes through the commit path (`admin_ending`)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

import asyncpg
from google.protobuf.timestamp_pb2 import Timestamp

from services.common.db import Connection, Pool
from services.common.pb.rummy.admin.v1 import admin_pb2

from . import convert, eventlog
from .event_kinds import table_event
from .event_wire import Viewing
from .tables import Tables

_SUMMARY = (
    "SELECT t.id, t.status, t.ruleset, t.created_at, t.updated_at, t.finished_at,"
    " t.turn_deadline, t.version, t.last_seq, s.seats, s.players, s.names, s.bots, s.gone"
    " FROM tables t LEFT JOIN LATERAL (SELECT array_agg(seat ORDER BY seat) AS seats,"
    " array_agg(player_id ORDER BY seat) AS players,"
    " array_agg(display_name ORDER BY seat) AS names,"
    " array_agg(is_bot ORDER BY seat) AS bots,"
    " array_agg(left_at IS NOT NULL ORDER BY seat) AS gone"
    " FROM table_seats WHERE table_id = t.id) AS s ON true"
)

LIST_TABLES = (
    _SUMMARY + " WHERE ($1::text IS NULL OR t.status = $1)"
    " AND ($2::float8 IS NULL OR t.created_at <= now() - make_interval(secs => $2))"
    " AND ($3::float8 IS NULL OR t.updated_at <= now() - make_interval(secs => $3))"
    " ORDER BY t.updated_at, t.id LIMIT $4"
)
"""Tables in a state ($1, NULL: any), made at least $2 seconds ago and idle at
least $3 (NULL: any), the longest idle first, at most $4. An operator's
occasional read: it may scan the tables kept, which the retention bounds."""

ONE_TABLE = _SUMMARY + " WHERE t.id = $1"

MAX_LOG_EVENTS = eventlog.READ_BATCH
"""Events one GetTableLog call returns at most: one read of the log."""

_STATES = {
    "active": admin_pb2.TABLE_STATE_ACTIVE,
    "finished": admin_pb2.TABLE_STATE_FINISHED,
}


@dataclass(frozen=True, slots=True)
class TableFilter:
    status: str | None
    """``active``, ``finished``, or None for both."""
    older_than_s: float | None
    idle_s: float | None
    limit: int


def _stamp(value: datetime | None) -> Timestamp | None:
    if value is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def summary(row: asyncpg.Record) -> admin_pb2.TableSummary:
    seats = row["seats"] or []
    return admin_pb2.TableSummary(
        table_id=str(row["id"]),
        state=_STATES.get(row["status"], admin_pb2.TABLE_STATE_UNSPECIFIED),
        ruleset=row["ruleset"],
        created_at=_stamp(row["created_at"]),
        updated_at=_stamp(row["updated_at"]),
        finished_at=_stamp(row["finished_at"]),
        due_at=_stamp(row["turn_deadline"]),
        version=row["version"],
        last_seq=row["last_seq"],
        seats=[
            admin_pb2.SeatSummary(
                seat=seat, player_id=player, display_name=name, is_bot=bot, left=gone
            )
            for seat, player, name, bot, gone in zip(
                seats, row["players"], row["names"], row["bots"], row["gone"], strict=True
            )
        ],
    )


async def list_tables(pool: Pool, wanted: TableFilter) -> admin_pb2.ListTablesResponse:
    rows = await pool.fetch(
        LIST_TABLES, wanted.status, wanted.older_than_s, wanted.idle_s, wanted.limit + 1
    )
    return admin_pb2.ListTablesResponse(
        tables=[summary(r) for r in rows[: wanted.limit]], truncated=len(rows) > wanted.limit
    )


async def table_summary(db: Connection | Pool, table_id: uuid.UUID) -> admin_pb2.TableSummary:
    """The table at a glance; it must exist (read it after `Tables.load`)."""
    row = await db.fetchrow(ONE_TABLE, table_id)
    assert row is not None, "a table is never deleted while it is read"
    return summary(row)


async def table_log(
    tables: Tables, pool: Pool, table_id: uuid.UUID, *, after_seq: int, limit: int
) -> admin_pb2.GetTableLogResponse:
    """The table now and up to ``limit`` (at most `MAX_LOG_EVENTS`) of its events
    after ``after_seq``, as a spectator sees them; TABLE_NOT_FOUND for a table
    there is no trace of."""
    committed, seats = await tables.store.load(table_id, "")
    state = committed.state
    viewing = Viewing(None, state.ruleset, state.options.contracts)
    logged = await eventlog.read_events(pool, table_id, after_seq)
    return admin_pb2.GetTableLogResponse(
        table=await table_summary(pool, table_id),
        view=convert.table_view(committed, seats, str(table_id)),
        events=[table_event(event, viewing) for event in logged[:limit]],
    )
