"""How many tickets wait in each queue, and where a waiting ticket stands."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from services.common import metrics
from services.common.db import Connection, Pool
from services.game.rules import PRESETS, QUICK_MATCH_SIZES


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
    for ruleset, rules in PRESETS.items():
        for size in range(2, rules.max_players + 1):
            for private in (False, True) if size in QUICK_MATCH_SIZES else (True,):
                queue = metrics.queue_label(size, ruleset, private=private)
                if queue not in seen:
                    metrics.QUEUE_DEPTH.labels(queue).set(0)
