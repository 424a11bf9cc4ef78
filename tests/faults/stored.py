"""What the server stored (a table's log and its kept answers), and the checks
of it against what the clients were told."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import asyncpg

from services.common.pb.rummy.v1 import table_pb2
from services.game import eventlog
from services.game.rules import events as ev
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

from .players import Ack


@dataclass(frozen=True, slots=True)
class Logged:
    seq: int
    version: int
    kind: str
    event: ev.Event


async def read_log(con: asyncpg.Connection, table_id: str) -> list[Logged]:
    rows = await con.fetch(
        "SELECT seq, version, kind, payload FROM table_events WHERE table_id = $1 ORDER BY seq",
        uuid.UUID(table_id),
    )
    return [
        Logged(r["seq"], r["version"], r["kind"], eventlog.decode(r["kind"], r["payload"]))
        for r in rows
    ]


async def stored_answer(con: asyncpg.Connection, table_id: str, request_id: str) -> bytes | None:
    """The answer the server committed for a request id (None: it never applied it)."""
    answer = await con.fetchval(
        "SELECT response FROM action_requests WHERE table_id = $1 AND request_id = $2",
        uuid.UUID(table_id),
        request_id,
    )
    return None if answer is None else bytes(answer)


def leads_to(action: Action, event: ev.Event) -> bool:
    """Whether ``event`` is the first one an accepted ``action`` logs."""
    match action:
        case DrawStock():
            return isinstance(event, ev.Drew) and not event.from_discard
        case TakeDiscard():
            return isinstance(event, ev.Drew) and event.from_discard
        case Meld():
            return isinstance(event, ev.Melded)
        case LayOff():
            return isinstance(event, ev.LaidOff)
        case SwapJoker():
            return isinstance(event, ev.JokerSwapped)
        case Discard():
            return isinstance(event, ev.Discarded) and event.card == action.card
        case Leave():
            return isinstance(event, ev.PlayerLeft)
    return False


async def assert_whole(con: asyncpg.Connection, table_id: str) -> list[Logged]:
    """The table row and its log agree: seqs 1..last_seq with no gap or repeat,
    versions 1..version each with events, in order."""
    row = await con.fetchrow(
        "SELECT version, last_seq, status FROM tables WHERE id = $1", uuid.UUID(table_id)
    )
    assert row is not None, f"no table {table_id}"
    log = await read_log(con, table_id)
    assert [x.seq for x in log] == list(range(1, row["last_seq"] + 1)), "seqs vs last_seq"
    versions = [x.version for x in log]
    assert versions == sorted(versions), "versions out of seq order"
    assert sorted(set(versions)) == list(range(1, row["version"] + 1)), "a version has no events"
    return log


async def assert_acks_logged_once(
    con: asyncpg.Connection, table_id: str, acks: Sequence[Ack]
) -> list[Logged]:
    """Every acknowledged action is in the log exactly once, at the version it was
    answered with, and nothing else was applied: version 1 is the deal, each later
    version one acknowledged action (or the table clock giving the turn in play its
    time back after an outage, which nobody is answered for), and the stored answer
    is the one the client got."""
    log = await assert_whole(con, table_id)
    acks = [a for a in acks if a.table_id == table_id]
    first: dict[int, Logged] = {}
    for x in log:
        first.setdefault(x.version, x)
    versions = [a.version for a in acks]
    assert len(set(versions)) == len(versions), "two acknowledged actions share a version"
    # A player's retry after an outage races the clock's resume of its turn.
    clock = [v for v, x in first.items() if isinstance(x.event, ev.TurnResumed)]
    applied = sorted(versions + clock)
    assert applied == list(range(2, 2 + len(applied))), "applied but not acknowledged"
    assert set(first) == {1, *applied}
    for a in acks:
        lead = first[a.version].event
        assert leads_to(a.action, lead), (a, lead)
        assert getattr(lead, "seat", None) == a.seat, (a, lead)
    # Explicitly: one Discarded event per acknowledged discard, per seat.
    for seat in {a.seat for a in acks}:
        discards = sum(1 for a in acks if a.seat == seat and isinstance(a.action, Discard))
        logged = sum(1 for x in log if isinstance(x.event, ev.Discarded) and x.event.seat == seat)
        assert logged == discards, f"seat {seat}: {logged} discards logged, {discards} acked"
    rows = await con.fetch(
        "SELECT player_id, request_id, response, error FROM action_requests WHERE table_id = $1",
        uuid.UUID(table_id),
    )
    assert all(r["error"] is None for r in rows), [r["error"] for r in rows if r["error"]]
    stored = {(r["player_id"], r["request_id"]): bytes(r["response"]) for r in rows}
    assert len(stored) == len(rows), "one request id stored twice"
    assert stored == {(a.player_id, a.request_id): a.reply for a in acks}
    assert log[-1].kind == "GameEnded"
    status = await con.fetchval("SELECT status FROM tables WHERE id = $1", uuid.UUID(table_id))
    assert status == "finished"
    return log


def assert_stream_is_log(events: Sequence[table_pb2.TableEvent], log: Sequence[Logged]) -> None:
    """A (resumed) stream saw every logged event once, in order."""
    assert [e.seq for e in events] == [x.seq for x in log], "gap or duplicate in the stream"
    assert [e.version for e in events] == [x.version for x in log]
