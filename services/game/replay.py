"""A finished game's replay: its seats and result, and its event log a page at a
time, for one caller.

A player who sat at the table sees every card (`Viewing.every_hand`: the game
is over, as at a real table when the hands are laid down); anyone else sees
exactly what a spectator's Watch stream sent (`Viewing` without a seat). The
events are the log's, turned into `TableEvent`s by the event registry
(`event_kinds.table_event`), as Watch does. A game past the event logs'
retention is refused as expired even before the purge deletes its table, so a
replay's answer does not depend on when the purge last ran.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

import asyncpg
import grpc

from services.common.db import Connection, Pool
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .event_kinds import BY_CLASS
from .event_wire import Viewing
from .eventlog import LoggedEvent, decode
from .player_queries import Seat
from .rules import events as ev
from .rules import serial
from .rules.rounds import final_places
from .rules.state import GameState, SeatStatus

HEADER = (
    "SELECT t.status, t.state, t.finished_at, t.last_seq, now() AS now,"
    " r.table_id IS NOT NULL AS recorded, s.players, s.names, s.bots"
    " FROM (SELECT $1::uuid AS id) AS k"
    " LEFT JOIN tables t ON t.id = k.id"
    " LEFT JOIN game_results r ON r.table_id = k.id"
    " LEFT JOIN LATERAL (SELECT array_agg(player_id ORDER BY seat) AS players,"
    " array_agg(display_name ORDER BY seat) AS names, array_agg(is_bot ORDER BY seat) AS bots"
    " FROM table_seats WHERE table_id = k.id) AS s ON true"
)
"""The table, whether its result is recorded (it outlives the table), and its seats."""

EVENTS = (
    "SELECT seq, version, kind, payload, created_at FROM table_events"
    " WHERE table_id = $1 AND seq > $2 ORDER BY seq LIMIT $3"
)

DEAL_KINDS = [BY_CLASS[ev.RoundDealt].name, BY_CLASS[ev.DeckRevealed].name]
DEALS = (
    "SELECT seq, version, kind, payload, created_at FROM table_events"
    " WHERE table_id = $1 AND kind = ANY($2::text[]) ORDER BY seq"
)
"""Every deal and every reveal of a table's log (one game's: a bounded read)."""


@dataclass(frozen=True, slots=True)
class Deal:
    """A round's deck commitment and what opened it (None: not in the log)."""

    round_no: int
    commitment: str
    revealed: ev.DeckRevealed | None


@dataclass(frozen=True, slots=True)
class Replay:
    table_id: uuid.UUID
    state: GameState
    """As the game ended."""
    seats: tuple[Seat, ...]
    my_seat: int | None
    finished_at: datetime
    viewing: Viewing
    events: list[LoggedEvent]
    more: bool
    """The log goes on after this page."""
    deals: tuple[Deal, ...]


def not_found() -> Refusal:
    return Refusal(
        grpc.StatusCode.NOT_FOUND,
        ServiceReason.GAME_NOT_FOUND,
        "There is no finished game with this id.",
    )


def expired(days: int) -> Refusal:
    if days <= 0:  # deleted under another setting: the age is not this server's to tell
        return Refusal(
            grpc.StatusCode.NOT_FOUND,
            ServiceReason.REPLAY_EXPIRED,
            "This game's moves are no longer kept.",
        )
    return Refusal(
        grpc.StatusCode.NOT_FOUND,
        ServiceReason.REPLAY_EXPIRED,
        f"This game finished more than {days} days ago: its moves are no longer kept.",
    )


async def replay(
    con: Connection | Pool,
    table_id: uuid.UUID,
    player_id: str,
    *,
    after_seq: int,
    most: int,
    retention_days: int,
) -> Replay:
    """A page of ``most`` events after ``after_seq`` of the finished game, as
    ``player_id`` may see it, with the deals on the first page (``after_seq`` 0)."""
    row = await con.fetchrow(HEADER, table_id)
    assert row is not None  # one row, always
    if row["status"] is None:
        # Gone: retention deleted it (its result outlives it), or it never was.
        raise expired(retention_days) if row["recorded"] else not_found()
    if row["status"] != "finished":
        raise not_found()
    finished_at: datetime = row["finished_at"]
    if retention_days > 0 and finished_at < row["now"] - timedelta(days=retention_days):
        raise expired(retention_days)
    state = serial.loads(row["state"])
    places = final_places(state)
    players, names, bots = row["players"] or [], row["names"] or [], row["bots"] or []
    seats = tuple(
        Seat(
            player_id=players[s],
            display_name=names[s],
            is_bot=bots[s],
            place=places[s],
            total=state.totals[s],
            gone=state.status[s] != SeatStatus.PLAYING,
        )
        for s in range(min(len(players), state.seats))
    )
    mine = next((s for s, p in enumerate(seats) if p.player_id == player_id and not p.is_bot), None)
    viewing = Viewing(mine, state.ruleset, state.options.contracts, every_hand=mine is not None)
    rows = await con.fetch(EVENTS, table_id, after_seq, most)
    if not rows and after_seq < row["last_seq"]:
        raise expired(retention_days)  # purged between the two reads
    events = [_logged(r) for r in rows]
    deals: tuple[Deal, ...] = ()
    if after_seq == 0:
        deals = _deals([_logged(r) for r in await con.fetch(DEALS, table_id, DEAL_KINDS)])
    return Replay(
        table_id=table_id,
        state=state,
        seats=seats,
        my_seat=mine,
        finished_at=finished_at,
        viewing=viewing,
        events=events,
        more=bool(events) and events[-1].seq < row["last_seq"],
        deals=deals,
    )


def _logged(r: asyncpg.Record) -> LoggedEvent:
    return LoggedEvent(r["seq"], r["version"], decode(r["kind"], r["payload"]), r["created_at"])


def _deals(logged: list[LoggedEvent]) -> tuple[Deal, ...]:
    """Each deal's commitment with the reveal of its round, oldest first."""
    events = [e.event for e in logged]
    revealed = {e.round_no: e for e in events if isinstance(e, ev.DeckRevealed)}
    return tuple(
        Deal(e.round_no, e.commitment, revealed.get(e.round_no))
        for e in events
        if isinstance(e, ev.RoundDealt)
    )
