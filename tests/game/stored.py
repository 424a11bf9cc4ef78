"""What the server stored, read straight from PostgreSQL behind its back: the
event log and the whole state, hidden cards included. The tests compare what
clients were sent against this ground truth."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime

import asyncpg
from google.protobuf.message import Message

from services.common.pb.rummy.v1 import cards_pb2, table_pb2
from services.game import eventlog
from services.game.event_kinds import table_event
from services.game.event_wire import Viewing
from services.game.rules import events as ev
from services.game.rules import serial
from services.game.rules.actions import (
    Action,
    Discard,
    DrawStock,
    LayOff,
    Leave,
    Meld,
    SwapJoker,
    TakeDiscard,
)
from services.game.rules.ruleset import preset
from services.game.rules.state import GameState


@dataclass(frozen=True, slots=True)
class Logged:
    seq: int
    version: int
    event: ev.Event
    kind: int
    """The `EventKind` clients are sent for it, as the server converts it."""


def action_kind(action: Action) -> int:
    """The kind of the first event an accepted action logs."""
    match action:
        case DrawStock():
            return table_pb2.EVENT_KIND_DREW
        case TakeDiscard():
            return table_pb2.EVENT_KIND_TOOK_DISCARD
        case Meld():
            return table_pb2.EVENT_KIND_MELDED
        case LayOff():
            return table_pb2.EVENT_KIND_LAID_OFF
        case SwapJoker():
            return table_pb2.EVENT_KIND_JOKER_SWAPPED
        case Discard():
            return table_pb2.EVENT_KIND_DISCARDED
        case Leave():
            return table_pb2.EVENT_KIND_PLAYER_LEFT
    raise AssertionError(f"no event for {action}")


class TableDb:
    """Reads a table's rows straight from PostgreSQL, behind the service's back."""

    def __init__(self, con: asyncpg.Connection) -> None:
        self._con = con

    async def log(self, table_id: str) -> list[Logged]:
        ruleset = await self._con.fetchval(
            "SELECT ruleset FROM tables WHERE id = $1", uuid.UUID(table_id)
        )
        rows = await self._con.fetch(
            "SELECT seq, version, kind, payload, created_at FROM table_events"
            " WHERE table_id = $1 ORDER BY seq",
            uuid.UUID(table_id),
        )
        logged = []
        for r in rows:
            event = eventlog.decode(r["kind"], r["payload"])
            row = eventlog.LoggedEvent(r["seq"], r["version"], event, r["created_at"])
            sent = table_event(row, Viewing(None, preset(ruleset)))
            logged.append(Logged(r["seq"], r["version"], event, sent.kind))
        return logged

    async def event_times(self, table_id: str) -> tuple[list[datetime], datetime]:
        """When each event happened, in seq order, by the table's clock; and the
        database's clock now."""
        rows = await self._con.fetch(
            "SELECT created_at FROM table_events WHERE table_id = $1 ORDER BY seq",
            uuid.UUID(table_id),
        )
        now: datetime = await self._con.fetchval("SELECT clock_timestamp()")
        return [r["created_at"] for r in rows], now

    async def state(self, table_id: str) -> tuple[int, GameState]:
        row = await self._con.fetchrow(
            "SELECT version, state FROM tables WHERE id = $1", uuid.UUID(table_id)
        )
        assert row is not None, "no such table"
        return row["version"], serial.loads(row["state"])

    async def kept_requests(self, table_id: str) -> int:
        """Request answers (and refusals) stored for the table."""
        count = await self._con.fetchval(
            "SELECT count(*) FROM action_requests WHERE table_id = $1", uuid.UUID(table_id)
        )
        return int(count)

    async def count_tables(self) -> int:
        return int(await self._con.fetchval("SELECT count(*) FROM tables"))


@asynccontextmanager
async def table_db(dsn: str) -> AsyncIterator[TableDb]:
    con = await asyncpg.connect(dsn)
    try:
        yield TableDb(con)
    finally:
        await con.close()


def assert_log_matches(events: Sequence[table_pb2.TableEvent], log: Sequence[Logged]) -> None:
    """A stream saw the whole log: every seq once, in order, with the logged kind."""
    assert [e.seq for e in events] == list(range(1, len(log) + 1)), "gap or duplicate"
    assert [(e.seq, e.version, e.kind) for e in events] == [(x.seq, x.version, x.kind) for x in log]


def card_ids(message: Message) -> set[int]:
    """Every card id a message carries, at any depth; not the deck a finished round
    reveals (`DeckRevealed.order`) nor the hands it lays face up (`cards_left`),
    which the tests check on their own (`hands_left`)."""
    if isinstance(message, cards_pb2.Card):
        return {message.id}
    found: set[int] = set()
    for fd, value in message.ListFields():
        values = value if fd.is_repeated else [value]
        if fd.name == "cards_left":
            continue
        if fd.message_type is not None:
            for item in values:
                found |= card_ids(item)
        elif fd.name.endswith(("card_id", "card_ids", "discard_id")):
            found.update(values)
    return found


def hands_left(result: table_pb2.RoundResult) -> list[list[int]]:
    """The card ids a round result lays face up, seat by seat."""
    return [[c.id for c in score.cards_left] for score in result.scores]


def not_presence(kind: int) -> bool:
    """An event of the game itself: not a seat's connection coming and going
    (`PlayerConnection`, logged whenever a seated player's stream opens or drops)."""
    return kind not in (table_pb2.EVENT_KIND_UNSPECIFIED, table_pb2.EVENT_KIND_PLAYER_CONNECTION)
