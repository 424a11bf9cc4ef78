"""The API's messages made from stored tickets."""

from __future__ import annotations

import functools
import json
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from services.common.wire.bot_levels import level_message
from services.common.wire.options import TARGET_200
from services.game.rules import BotLevel

from .tickets import TicketRow

_STATES = {
    "queued": mm.TICKET_STATE_QUEUED,
    "matching": mm.TICKET_STATE_QUEUED,
    "matched": mm.TICKET_STATE_MATCHED,
    "cancelled": mm.TICKET_STATE_CANCELLED,
    "expired": mm.TICKET_STATE_EXPIRED,
}


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _stamp(value: datetime) -> Timestamp:
    # Whole days, seconds and microseconds: exact, where a float of seconds is not.
    since = value - _EPOCH
    return Timestamp(seconds=since.days * 86_400 + since.seconds, nanos=since.microseconds * 1000)


def options_message(options: dict[str, Any]) -> table_pb2.TableOptions:
    """The stored effective options as the API carries them."""
    return table_pb2.TableOptions(
        turn_timer_ms=options.get("turn_timer_ms", 0),
        turn_cap=options.get("turn_cap", 0),
        rounds=options.get("rounds", 0),
        elimination_cap=options.get("elimination_cap", 0),
        opening_threshold=options.get("opening_threshold", 0),
        to_200=options.get("target_score", 0) == TARGET_200,
        buy_backs=options.get("buy_backs", 0),
        claim_window_ms=options.get("claim_window_ms", 0),
        contracts=[
            table_pb2.Contract(
                groups=c["groups"], runs=c["runs"], no_final_discard=c["no_final_discard"]
            )
            for c in options.get("contracts", ())
        ],
    )


def readable_options(options: Any) -> table_pb2.TableOptions | None:
    """`options_message`, or None for stored options this build cannot read (a
    ticket stored before an update changed what they may hold)."""
    try:
        return options_message(options)
    except Exception:
        return None


@functools.lru_cache(maxsize=256)
def stored_options(text: str) -> table_pb2.TableOptions | None:
    """`readable_options` of options as tickets store them (JSON text). Remembered:
    the tickets of a queue all hold the same. The message is shared: copy it,
    never change it."""
    try:
        return readable_options(json.loads(text))
    except ValueError:
        return None


def ticket_message(row: TicketRow, *, game_target: str) -> mm.Ticket:
    # Unreadable options are left out: the ticket's state and end message still
    # reach its player.
    options = stored_options(row.options)
    message = mm.Ticket(
        ticket_id=str(row.id),
        state=_STATES[row.state],
        table_size=row.table_size,
        ruleset=row.ruleset,
        options=options if options is not None else table_pb2.TableOptions(),
        created_at=_stamp(row.created_at),
        expires_at=_stamp(row.expires_at),
        invite_code=row.invite_code or "",
        end_message=row.end_message,
        bot_level=level_message(BotLevel(row.bot_level)),
    )
    if row.state == "matched":
        message.match.CopyFrom(match_message(row, game_target=game_target))
    return message


def match_message(row: TicketRow, *, game_target: str) -> mm.Match:
    return mm.Match(
        table_id=str(row.table_id),
        seat=row.seat or 0,
        table_size=row.seated or row.table_size,
        game_target=game_target,
    )
