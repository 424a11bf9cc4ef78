"""Engine events as rows of the append-only `table_events` log.

A row is a table's event at its seq (1, 2, 3... with no gaps: the resume cursor
of Watch), the table's version after the action that caused it, its kind's name
and its payload (`event_kinds`), and when it happened. The log keeps every
event whole (hidden cards included) so any replica can replay it; only
`Event.visible_to` decides what a viewer is sent.
"""

from __future__ import annotations

import uuid
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import datetime

from google.protobuf.message import Message

from services.common.db import Connection, Pool

from .event_kinds import BY_CLASS, BY_NAME
from .rules import events as ev

READ_BATCH = 1000
"""Events read from the log at a time: by a watcher catching up, and by the
fan-out for the live watchers of a table that moved on another replica. A
shorter batch means the log had no more."""


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    seq: int
    version: int
    event: ev.Event
    at: datetime
    forms: dict[Hashable, Message] = field(default_factory=dict, compare=False, repr=False)
    """Its Watch messages once built, by what a viewer sees of it
    (`event_kinds.form_key`): the fan-out hands every live watcher of a table on
    this replica the same object, so each form is built once, not per watcher."""


def kind_of(event: ev.Event) -> str:
    return BY_CLASS[type(event)].name


def encode(event: ev.Event) -> bytes:
    codec = BY_CLASS[type(event)].payload
    return codec.encode(event)


def decode(kind: str, payload: bytes) -> ev.Event:
    """The event a row holds; KeyError for a kind this build does not know."""
    event: ev.Event = BY_NAME[kind].payload.decode(payload)
    return event


async def read_events(con: Connection | Pool, table_id: uuid.UUID, after: int) -> list[LoggedEvent]:
    """Up to `READ_BATCH` events of the table after seq ``after``, in seq order."""
    rows = await con.fetch(
        "SELECT seq, version, kind, payload, created_at FROM table_events"
        " WHERE table_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
        table_id,
        after,
        READ_BATCH,
    )
    return [
        LoggedEvent(r["seq"], r["version"], decode(r["kind"], r["payload"]), r["created_at"])
        for r in rows
    ]
