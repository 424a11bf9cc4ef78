"""`rummy replay TABLE`: a finished game move by move, and whether every shuffle
verifies. A player who sat at the table sees every hand; anyone else what a
spectator saw. On a terminal the table is drawn full screen and stepped through
with keys (`tui.replay_screen`); otherwise (or with --plain) the game is told in
lines, each deal with the hands it gave."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from services.common.pb.rummy.v1 import player_pb2, table_pb2

from .cards import Style
from .connection import Connection
from .deckcheck import check_deals
from .history_cmd import ordinal
from .replay_table import Replay, steps
from .tui.replay_model import hand_lines

PAGE_SIZE = 2000
"""Events a page: the most the server sends at once."""
WIDTH = 80


def fit(text: str, width: int = WIDTH) -> str:
    """Each line of ``text`` wrapped to ``width`` columns, going on indented."""
    lines = []
    for line in text.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        more = indent + "  "
        lines += textwrap.wrap(line, width, subsequent_indent=more, break_on_hyphens=False)
    return "\n".join(lines)


async def load(conn: Connection, table_id: str, style: Style) -> Replay:
    """Every page of the game's replay, its steps, and its shuffles checked."""
    request = player_pb2.GetReplayRequest(table_id=table_id, page_size=PAGE_SIZE)
    first: player_pb2.GetReplayResponse = await conn.call_players("GetReplay", request)
    events: list[table_pb2.TableEvent] = list(first.events)
    token = first.next_page_token
    while token:
        request = player_pb2.GetReplayRequest(
            table_id=table_id, page_size=PAGE_SIZE, page_token=token
        )
        page: player_pb2.GetReplayResponse = await conn.call_players("GetReplay", request)
        events.extend(page.events)
        token = page.next_page_token
    checks = check_deals(first.deals, events)
    return Replay(first, steps(first, events, style, checks), checks)


def header_lines(first: player_pb2.GetReplayResponse) -> list[str]:
    """Which game, who sat where with their place and total, what is shown."""
    seats = []
    for seat in first.seats:
        name = seat.display_name or f"Seat {seat.seat + 1}"
        if first.HasField("my_seat") and first.my_seat == seat.seat:
            name += " (you)"
        elif seat.is_bot:
            name += " (bot)"
        seats.append(f"{ordinal(seat.place)} {name} {seat.total}")
    shown = (
        "You sat at this table: every hand is shown."
        if first.hands_shown
        else "You did not sit at this table: hands stay hidden, as a spectator saw them."
    )
    return [f"Replay of table {first.table_id} ({first.ruleset})", "  " + " · ".join(seats), shown]


async def tell(
    conn: Connection, table_id: str, style: Style, *, say: Callable[[str], None] = print
) -> int:
    """The game in lines; exit status 1 when a shuffle does not verify."""
    replay = await load(conn, table_id, style)
    say(fit("\n".join(header_lines(replay.first))))
    for step in replay.steps:
        if step.sentence:
            say(fit(step.sentence))
        if step.event.HasField("dealt") and any(h is not None for h in step.hands):
            say("\n".join(hand_lines(step, style)))
    say(f"Shuffles: {replay.shuffles}.")
    return 0 if replay.verified else 1
