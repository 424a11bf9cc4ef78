"""What the operators read and do of the queues (`QueueAdminService`): every
queue with its live tickets and lately matched ones, and a player's tickets
taken off the queues as a cancel would."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, field

import asyncpg
import grpc
from google.protobuf.duration_pb2 import Duration

from services.common import metrics
from services.common.db import Pool
from services.common.pb.rummy.admin.v1 import admin_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import endings
from .messages import stored_options

_PRIVATE = "invite_code IS NOT NULL"
_FAMILY = "CASE WHEN invite_code IS NULL THEN family ELSE '' END"
_QUEUE = f"table_size, ruleset, {_PRIVATE} AS private, {_FAMILY} AS family"
"""What tells a queue: a public one is its family (rule set, mode and options)
and table size; private tables are summed up by table size and rule set."""

QUEUES = (
    f"SELECT {_QUEUE}, min(mode) AS mode, min(options::text) AS options,"
    " count(*) FILTER (WHERE state = 'queued') AS waiting,"
    " count(*) FILTER (WHERE state = 'matching') AS matching,"
    " extract(epoch from max(now() - created_at)"
    " FILTER (WHERE state IN ('queued', 'matching')))::float8 AS longest_s,"
    " count(*) FILTER (WHERE state = 'matched') AS matched,"
    " percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch from ended_at - created_at))"
    " FILTER (WHERE state = 'matched') AS median_s"
    " FROM tickets WHERE state IN ('queued', 'matching')"
    " OR (state = 'matched' AND ended_at > now() - interval '1 hour')"
    " GROUP BY 1, 2, 3, 4 ORDER BY waiting DESC, matching DESC, 1, 2, 3, 4"
)
"""Every queue with a live ticket or a match in the last hour: its tickets
waiting and being seated, the longest wait, and the last hour's matches with
their median wait."""

LIVE_TICKETS = (
    "SELECT * FROM (SELECT id, player_id, display_name, state, invite_code, is_host,"
    f" {_QUEUE}, extract(epoch from now() - created_at)::float8 AS waited_s,"
    " row_number() OVER (PARTITION BY table_size, ruleset,"
    f" {_PRIVATE}, {_FAMILY} ORDER BY created_at, id) AS n"
    " FROM tickets WHERE state IN ('queued', 'matching')) AS live WHERE n <= $1"
    " ORDER BY n"
)
"""Up to $1 live tickets of each queue, the longest waiting first."""

PLAYER_TICKETS = (
    "SELECT id, state, invite_code, is_host FROM tickets"
    " WHERE player_id = $1 AND state IN ('queued', 'matching') ORDER BY created_at"
)

TAKEN_OFF = "The people who run the game took you off the queue"
CLOSED = "The people who run the game closed this private table"

_MODES = {"fifo": mm.MATCH_MODE_FIFO, "rating": mm.MATCH_MODE_RATING}


def _duration(seconds: float | None) -> Duration:
    duration = Duration()
    duration.FromMilliseconds(round((seconds or 0.0) * 1000))
    return duration


def _key(row: asyncpg.Record) -> tuple[int, str, bool, str]:
    return row["table_size"], row["ruleset"], row["private"], row["family"]


def _queue(row: asyncpg.Record) -> admin_pb2.QueueSummary:
    private = row["private"]
    queue = admin_pb2.QueueSummary(
        queue=metrics.queue_label(row["table_size"], row["ruleset"], private=private),
        table_size=row["table_size"],
        ruleset=row["ruleset"],
        mode=mm.MATCH_MODE_UNSPECIFIED
        if private
        else _MODES.get(row["mode"], mm.MATCH_MODE_UNSPECIFIED),
        private=private,
        waiting=row["waiting"],
        matching=row["matching"],
        longest_wait=_duration(row["longest_s"]),
        matched_last_hour=row["matched"],
        median_match_wait=_duration(row["median_s"]),
    )
    options = None if private else stored_options(row["options"])
    if options is not None:
        queue.options.CopyFrom(options)
    return queue


async def list_queues(pool: Pool, tickets_per_queue: int) -> admin_pb2.ListQueuesResponse:
    rows = await pool.fetch(QUEUES)
    live: dict[tuple[int, str, bool, str], list[admin_pb2.LiveTicket]] = defaultdict(list)
    if tickets_per_queue:
        for t in await pool.fetch(LIVE_TICKETS, tickets_per_queue):
            live[_key(t)].append(
                admin_pb2.LiveTicket(
                    ticket_id=str(t["id"]),
                    player_id=t["player_id"],
                    display_name=t["display_name"],
                    matching=t["state"] == "matching",
                    waited=_duration(t["waited_s"]),
                    invite_code=t["invite_code"] or "",
                    host=t["is_host"],
                )
            )
    queues = []
    for row in rows:
        queue = _queue(row)
        queue.tickets.extend(live.get(_key(row), ()))
        queues.append(queue)
    return admin_pb2.ListQueuesResponse(queues=queues)


@dataclass
class Removed:
    """What became of a player's live tickets."""

    removed: list[uuid.UUID] = field(default_factory=list)
    still_matching: list[uuid.UUID] = field(default_factory=list)


async def remove_tickets(pool: Pool, player_id: str, reason: str) -> Removed:
    """Cancel ``player_id``'s live tickets, as their Cancel would, telling them why
    in ``end_message``; a host's queued ticket closes its private table for every
    guest too. TICKET_NOT_FOUND when the player has no live ticket."""
    rows = await pool.fetch(PLAYER_TICKETS, player_id)
    if not rows:
        raise Refusal(
            grpc.StatusCode.NOT_FOUND,
            ServiceReason.TICKET_NOT_FOUND,
            "This player has no ticket waiting or being seated.",
        )
    why = f": {reason}" if reason else "."
    done = Removed()
    for row in rows:
        closed = False
        if row["invite_code"] and row["is_host"] and row["state"] == "queued":
            closed = await endings.cancel_private(pool, row["invite_code"], CLOSED + why)
        outcome = True if closed else await endings.cancel(pool, row["id"], TAKEN_OFF + why)
        if outcome is None:
            done.still_matching.append(row["id"])
        elif outcome:
            done.removed.append(row["id"])
    return done
