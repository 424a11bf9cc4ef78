"""What `rummy admin` prints: the admin services' answers as lines an operator
reads at a glance (ages as "2h 05m", a table's events as sentences)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from services.common.pb.rummy.admin.v1 import admin_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2

from .cards import Style, plural
from .narrate import narrate
from .render import seat_name

PLAIN = Style(False, symbols=False)
"""Cards as codes (7S, TH, JK): a log is read, searched and pasted, not played."""
_STATES = {
    admin_pb2.TABLE_STATE_ACTIVE: "active",
    admin_pb2.TABLE_STATE_FINISHED: "finished",
}
_MODES = {mm.MATCH_MODE_FIFO: "fifo", mm.MATCH_MODE_RATING: "rating"}


def span(seconds: float) -> str:
    """``45s``, ``12m 05s``, ``3h 02m``, ``2d 4h``: two units at most."""
    whole = max(0, round(seconds))
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def _since(stamp: Timestamp, now: datetime) -> str:
    return span((now - stamp.ToDatetime(UTC)).total_seconds())


def _due(table: admin_pb2.TableSummary, now: datetime) -> str:
    if not table.HasField("due_at"):
        return "-"
    left = (table.due_at.ToDatetime(UTC) - now).total_seconds()
    return f"in {span(left)}" if left >= 0 else f"{span(-left)} late"


def _seats(table: admin_pb2.TableSummary) -> str:
    return ", ".join(
        s.display_name + (" (bot)" if s.is_bot else "") + (" (left)" if s.left else "")
        for s in table.seats
    )


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as aligned columns, the last one left as it is."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  ".join([*(cell.ljust(w) for cell, w in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]


def tables_text(reply: admin_pb2.ListTablesResponse, now: datetime) -> str:
    if not reply.tables:
        return "No table matches."
    rows = [["TABLE", "STATE", "RULES", "AGE", "IDLE", "DUE", "SEATS"]]
    rows += [
        [
            t.table_id,
            _STATES.get(t.state, "?"),
            t.ruleset,
            _since(t.created_at, now),
            _since(t.updated_at, now),
            _due(t, now),
            _seats(t),
        ]
        for t in reply.tables
    ]
    more = "\n(more tables match: --limit shows more)" if reply.truncated else ""
    count = len(reply.tables)
    head = f"{plural(count, 'table')}, the longest idle first:"
    return "\n".join([head, *_columns(rows)]) + more


def _quiet(event: table_pb2.TableEvent, view: table_pb2.TableView) -> str:
    """What the players' commentary leaves unsaid, told for the log."""
    kind = event.WhichOneof("payload") or "unknown"
    who = seat_name(view, event.seat) if event.HasField("seat") else ""
    if kind == "turn_started":
        return f"Turn {event.turn_started.turn}: {who} to play."
    if kind == "deck_revealed":
        return f"Round {event.deck_revealed.round}'s deck revealed."
    return f"{kind.replace('_', ' ')}" + (f" ({who})" if who else "")


def log_text(reply: admin_pb2.GetTableLogResponse) -> str:
    table, view = reply.table, reply.view
    seats = ", ".join(f"{s.display_name or '?'} ({s.seat})" for s in view.seats)
    lines = [
        f"Table {table.table_id} · {table.ruleset} · {_STATES.get(table.state, '?')}"
        f" · version {table.version} · seats: {seats}"
    ]
    for event in reply.events:
        at = event.occurred_at.ToDatetime(UTC).strftime("%Y-%m-%d %H:%M:%S")
        said = narrate(event, view, PLAIN) or _quiet(event, view)
        first, *rest = said.splitlines()
        lines.append(f"{event.seq:>5}  {at}  {first}")
        lines += [f"{'':>5}  {'':19}  {line.strip()}" for line in rest]
    if not reply.events:
        lines.append("(no event after that one)")
    return "\n".join(lines)


def ended_text(reply: admin_pb2.EndTableResponse, reason: str) -> str:
    return (
        f"Table {reply.table.table_id} ended (event {reply.ended_seq}): its players were told"
        f" “{reason.strip()}”."
    )


def _wait(duration: Duration) -> str:
    return span(duration.ToTimedelta().total_seconds())


def queues_text(reply: admin_pb2.ListQueuesResponse) -> str:
    if not reply.queues:
        return "No queue has a ticket, nor a match in the last hour."
    rows = [["QUEUE", "MODE", "WAITING", "SEATING", "LONGEST", "MATCHED/1H", "MEDIAN WAIT"]]
    tickets: dict[str, list[str]] = {}
    for q in reply.queues:
        rows.append(
            [
                q.queue,
                "private" if q.private else _MODES.get(q.mode, "?"),
                str(q.waiting),
                str(q.matching),
                _wait(q.longest_wait) if q.waiting or q.matching else "-",
                str(q.matched_last_hour),
                _wait(q.median_match_wait) if q.matched_last_hour else "-",
            ]
        )
        tickets[q.queue] = [
            f"  {q.queue}: {t.display_name or '?'} ({t.player_id}) waited {_wait(t.waited)}"
            + (f", {'hosts' if t.host else 'joined'} {t.invite_code}" if t.invite_code else "")
            + (", being seated" if t.matching else "")
            + f" · ticket {t.ticket_id}"
            for t in q.tickets
        ]
    listed = [line for lines in tickets.values() for line in lines]
    return "\n".join(
        _columns(rows) + (["Tickets, the longest waiting first:", *listed] if listed else [])
    )


def removed_text(reply: admin_pb2.RemoveTicketsResponse, player_id: str) -> str:
    lines = []
    if reply.removed:
        count = len(reply.removed)
        lines.append(
            f"Removed {plural(count, 'ticket')} of {player_id}: {', '.join(reply.removed)}."
        )
    if reply.still_matching:
        lines.append(
            f"Being seated at a table already, left to it: {', '.join(reply.still_matching)}."
        )
    return "\n".join(lines) or f"No ticket of {player_id} was live any more."
