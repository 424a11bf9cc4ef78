"""`rummy watch TABLE`: follow a table, as a spectator or from your own seat.

The server decides what the caller sees: a seated player gets their own view
(hand included), anyone else the spectator's view. The stream resumes by
itself after a disconnect, like `play`.
"""

from __future__ import annotations

import grpc

from services.common.pb.rummy.v1 import table_pb2
from services.common.wire.refusals import Refusal

from .cards import Style, colour_wanted, symbols_wanted
from .connection import Connection
from .deckcheck import DeckCheck
from .narrator import Narrator
from .reach import count_in_lines, sign_in
from .refusals import RETRYABLE
from .render import Clock, game_text, table_text, turn_status


async def open_table(conn: Connection, table_id: str) -> table_pb2.TableView | tuple[int, str]:
    """The table as this player may see it, or why not: (exit status, sentence)."""
    try:
        return await conn.view(table_id)
    except Refusal as refused:
        if refused.code == grpc.StatusCode.UNIMPLEMENTED:
            return 2, (
                f"{conn.game_target} serves no games: pass the game service's address "
                "with --game HOST:PORT."
            )
        if refused.code in RETRYABLE:
            return 2, (
                f"No game service answers at {conn.game_target}: pass the game service's "
                "address with --game HOST:PORT."
            )
        return 1, f"Cannot watch this table: {refused}"


async def watch(conn: Connection, table_id: str) -> int:
    style = Style(colour_wanted(), symbols=symbols_wanted())
    clock = Clock()
    await sign_in(conn, say=print, countdown=count_in_lines)
    found = await open_table(conn, table_id)
    if isinstance(found, tuple):
        print(found[1])
        return found[0]
    view = found
    who = "from your seat" if view.HasField("my_seat") else "as a spectator"
    print(f"Watching table {table_id} {who}. Ctrl-C to stop.")

    def show(view: table_pb2.TableView) -> None:
        clock.sync(view)
        print(table_text(view, style))
        print(f"[{turn_status(view, clock, style)}]", flush=True)

    show(view)
    if view.phase == table_pb2.PHASE_GAME_OVER:
        print(game_text(view))
        return 0
    decks = DeckCheck()
    decks.adopt(view)
    narrator = Narrator(style, clock)
    async for item in conn.watch(table_id, view.last_seq):
        if isinstance(item, table_pb2.TableView):
            view = item
            show(view)
            continue
        text = narrator.tell(item, view)
        if text:
            print(text, flush=True)
        decks.adopt(view)
        checked = decks.see(item)
        if checked:
            print(checked, flush=True)
        if item.kind in (table_pb2.EVENT_KIND_TURN_STARTED, table_pb2.EVENT_KIND_TURN_RESUMED):
            view = await conn.view(table_id)
            show(view)
        elif item.kind == table_pb2.EVENT_KIND_GAME_ENDED:
            return 0
    return 0
