"""`rummy play`: a whole game at the terminal.

One loop takes, in arrival order, the lines the player types and the events of
the table's Watch stream. Events are narrated as they come; the view is
refreshed with GetTable once a burst of events is over; the whole table is
shown when the player's turn begins and after each of their moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.wire.refusals import Refusal

from . import commands as C
from . import matchmaking
from .cards import Style, colour_wanted, symbols_wanted
from .connection import Connection
from .deckcheck import DeckCheck
from .discards import claim_text
from .identity import Identity, LastMatch
from .moves import MoveError, Request, hint_text, request_for, swap_plan, swap_refused
from .narrate import answered
from .narrator import Narrator
from .reach import count_in_lines, sign_in
from .render import (
    Clock,
    follow_resume,
    game_text,
    hand_line,
    my_turn,
    table_text,
    turn_status,
)
from .terminal import Terminal

TICK_S = 1.0
"""How often the countdown in the prompt moves."""


class Game:
    """One seat at one table, driven from the terminal."""

    def __init__(self, conn: Connection, view: table_pb2.TableView, style: Style) -> None:
        self.conn = conn
        self.view = view
        self.style = style
        self.decks = DeckCheck()
        self.clock = Clock()
        self.clock.sync(view)
        self.narrator = Narrator(style, self.clock, commands=True)
        self.inbox: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.term = Terminal(
            lambda line: self.inbox.put_nowait(("line", line)), completions=self._card_names
        )
        self.stale = False
        self.shown_turn: tuple[int, int] = (-1, -1)
        self.new_deal = 0
        """A round dealt and not shown yet (0: none): the player sees their new hand."""
        self.asking = ""
        """A one-line question shown as the prompt while its answer is awaited."""
        self.finished = False
        self.told_seq = view.last_seq
        """The last event narrated: a newer view waits until the events before it are told."""
        self.waiting: table_pb2.TableView | None = None
        self.waiting_show = False

    def _card_names(self) -> list[str]:
        return [c.code for c in self.view.hand]

    def say(self, text: str) -> None:
        self.term.say(text)

    def prompt(self) -> str:
        if self.asking:
            return self.asking
        return f"[{turn_status(self.view, self.clock, self.style)}] > "

    def update(self, view: table_pb2.TableView) -> None:
        """Keep the newest view (answers and refreshes may arrive out of order)."""
        if view.version >= self.view.version:
            self.view = view
            self.clock.sync(view)
        if not self.finished:
            self.term.set_prompt(self.prompt())

    def show(self) -> None:
        self.shown_turn = (self.view.round, self.view.turn)
        if self.view.round >= self.new_deal:
            self.new_deal = 0
        self.say(table_text(self.view, self.style))

    # --- the loop -------------------------------------------------------------------

    async def run(self) -> int:
        self.show()
        self.term.set_prompt(self.prompt())
        watcher = asyncio.create_task(self._watch())
        ticker = asyncio.create_task(self._tick())
        self.term.request_line()
        try:
            while not self.finished:
                if self.stale and self.inbox.empty():
                    await self.refresh()
                kind, item = await self.inbox.get()
                if kind == "event":
                    self.on_event(item)
                elif kind == "line":
                    if await self.on_line(item):
                        return 0
                    if not self.finished:
                        self.term.request_line()
                elif kind == "end":
                    await self.refresh()
                    if self.view.phase == table_pb2.PHASE_GAME_OVER and not self.finished:
                        self.say(game_text(self.view))
                    self.finished = True
                elif kind == "error":
                    raise item
            return 0
        finally:
            for task in (watcher, ticker):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            self.term.restore()

    async def _watch(self) -> None:
        try:
            async for item in self.conn.watch(self.view.table_id, self.view.last_seq):
                self.inbox.put_nowait(("event", item))
            self.inbox.put_nowait(("end", None))
        except Refusal as refused:
            self.inbox.put_nowait(("error", refused))

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            if self.term.interactive and not self.finished:
                self.term.set_prompt(self.prompt())

    async def refresh(self) -> None:
        self.stale = False
        self.adopt(await self.conn.view(self.view.table_id))

    def adopt(self, view: table_pb2.TableView, *, show: bool = False) -> None:
        """Switch to a fresh view once the events it includes have been narrated, so
        the table is never shown ahead of the story; show it when the turn is ours."""
        if view.last_seq > self.told_seq:
            if self.waiting is None or view.version >= self.waiting.version:
                self.waiting = view
            self.waiting_show |= show
            return
        self.update(view)
        if show or self._show_due():
            self.show()

    def _show_due(self) -> bool:
        """Whether the table is shown unasked: a turn of ours begins, or a new deal."""
        if self.new_deal and self.view.round >= self.new_deal:
            return True
        return my_turn(self.view) and self.shown_turn != (self.view.round, self.view.turn)

    def on_event(self, item: table_pb2.TableEvent | table_pb2.TableView) -> None:
        if isinstance(item, table_pb2.TableView):
            self.adopt(item, show=True)
            return
        own = item.HasField("seat") and self.view.my_seat == item.seat
        kind = item.WhichOneof("payload")
        quiet = own and answered(item)  # the answer to the move told them already
        if kind == "game_ended":
            self.finished = True
            self.term.set_prompt("")
        elif kind == "dealt":
            self.new_deal = item.dealt.round
        elif kind == "turn_resumed" and follow_resume(self.view, item):
            self.term.set_prompt(self.prompt())  # the countdown shows the time given back
        text = self.narrator.tell(item, self.view)  # every event: it follows the story
        if text and not quiet:
            self.say(text)
        self.decks.adopt(self.view)
        checked = self.decks.see(item)
        if checked:
            self.say(checked)
        if item.version > self.view.version:
            self.stale = True
        self.told_seq = max(self.told_seq, item.seq)
        if self.waiting is not None and self.told_seq >= self.waiting.last_seq:
            view, show = self.waiting, self.waiting_show
            self.waiting, self.waiting_show = None, False
            self.adopt(view, show=show)
        if self.new_deal and self.waiting is None:
            # Shown once the view has the deal and nothing newer than the story.
            if self.view.round < self.new_deal:
                self.stale = True
            elif self.view.last_seq <= self.told_seq:
                self.show()
        if kind == "game_ended":
            self.finished = True

    # --- the player's commands ------------------------------------------------------

    async def on_line(self, line: str | None) -> bool:
        """Handle one typed line; True when the player is done with this table."""
        if line is None:
            self.say("\nBye. Your seat is kept: run `rummy play` again to rejoin this table.")
            return True
        try:
            command = C.parse(line)
        except C.CommandError as error:
            self.say(str(error))
            return False
        match command:
            case C.Nothing():
                return False
            case C.Help():
                self.say(C.HELP)
            case C.Show():
                self.show()
            case C.Hint():
                await self.hint()
            case C.Quit():
                return await self.leave()
            case C.SwapCommand():
                await self.swap(command)
            case _:
                try:
                    await self.send(request_for(self.view, command, self.style))
                except MoveError as error:
                    self.say(f"{error}\n{hand_line(self.view.hand, self.style)}")
        return False

    async def send(self, request: Request) -> bool:
        """Send a move; a refusal shows the server's sentence and the hand again."""
        # The card's name comes from the hand as it is now: once the move is made,
        # a discard that ends the round leaves a new deal's pile in the reply.
        held = {c.id: c.code for c in self.view.hand}
        offer = self.view.claim_window.card.code if self.view.HasField("claim_window") else ""
        try:
            reply = await self.conn.act(request.method, request.message)
        except Refusal as refused:
            self.say(f"Refused: {refused}")
            if refused.code == grpc.StatusCode.ABORTED:
                await self.refresh()
                self.show()
            else:
                self.say(hand_line(self.view.hand, self.style))
            return False
        self.update(reply.view)
        if request.method == "DrawStock" and reply.HasField("card"):
            self.say(f"You drew {self.style.card(reply.card.code)}.")
            self.say(hand_line(self.view.hand, self.style))
        elif request.method == "TakeDiscard":
            self.say(hand_line(self.view.hand, self.style))
        elif request.method == "Claim":
            self.say(claim_text(self.view.my_seat, self.view, self.style, offer))
        elif request.method == "Discard":
            code = held.get(getattr(request.message, "card_id", -1))
            self.say(f"You discarded {self.style.card(code)}." if code else "You discarded.")
        else:
            self.show()
        return True

    async def hint(self) -> None:
        try:
            reply = await self.conn.call(
                "GetHint", game_pb2.GetHintRequest(table_id=self.view.table_id)
            )
        except Refusal as refused:
            self.say(f"No hint: {refused}")
            return
        self.say(hint_text(self.view, reply, self.style))

    async def ask(self, question: str, *, inline: bool = False) -> str | None:
        """A question answered on the next line; table events keep coming meanwhile.
        ``inline``: a one-line question, shown as the prompt until it is answered."""
        if inline:
            self.asking = f"{question} > "
            self.term.set_prompt(self.prompt())
        else:
            self.say(question)
        self.term.request_line()
        try:
            return await self._answer()
        finally:
            if inline:
                self.asking = ""
                if not self.finished:
                    self.term.set_prompt(self.prompt())

    async def _answer(self) -> str | None:
        while True:
            kind, item = await self.inbox.get()
            if kind == "line":
                if item is None:
                    # End of input (Ctrl-D): no answer, and no more lines will come.
                    # The main loop sees it too, and quits keeping the seat.
                    self.inbox.put_nowait((kind, item))
                    return None
                return str(item).strip()
            if kind == "event":
                self.on_event(item)
            else:
                self.inbox.put_nowait((kind, item))
                return None

    async def leave(self) -> bool:
        answer = await self.ask("Leave this table for good? You lose the game. [y/N]", inline=True)
        if not answer or answer.lower() not in ("y", "yes"):
            self.say("Staying at the table.")
            return False
        try:
            reply = await self.conn.act("Leave", game_pb2.LeaveRequest(table_id=self.view.table_id))
        except Refusal as refused:
            self.say(f"Could not leave: {refused}")
            return False
        self.update(reply.view)
        self.say("You left the table.")
        if self.view.phase == table_pb2.PHASE_GAME_OVER:
            self.say(game_text(self.view))
        return True

    async def swap(self, command: C.SwapCommand) -> None:
        # Whose turn, which phase, opened or not: said before any question is asked.
        refused = swap_refused(self.view)
        if refused is not None:
            said = f"Refused: {refused.message} [{refused.reason.value}]"
            self.say(f"{said}\n{hand_line(self.view.hand, self.style)}")
            return
        try:
            plan = swap_plan(self.view, command, self.style)
        except MoveError as error:
            self.say(f"{error}\n{hand_line(self.view.hand, self.style)}")
            return
        answer = await self.ask(plan.question(self.view.hand))
        if not answer:
            self.say("Swap cancelled.")
            return
        try:
            request = plan.placement(answer, self.view.hand)
        except MoveError as error:
            self.say(f"{error}\n{hand_line(self.view.hand, self.style)}")
            return
        await self.send(request)


@dataclass(frozen=True, slots=True)
class Seek:
    """How a table is found when the player has none to go back to: queue, host, join."""

    find: Callable[[Connection, Identity, Callable[[str], None]], Awaitable[LastMatch]]
    instead: str = ""
    """What `host` or `join` asks for ("host a new table"): refused while the player
    keeps a seat at a table still in play. Empty (`play`): back to that seat."""
    slow: str = ""
    """Told once a wait has lasted `SLOW_WAIT_S` (a queue with nobody else: bots)."""


SLOW_WAIT_S = 20.0
"""A wait this long without a table is worth a word of what else to do."""


async def _find(seek: Seek, conn: Connection, identity: Identity) -> LastMatch:
    """Wait for a table, saying `seek.slow` once the wait is long."""
    if not seek.slow:
        return await seek.find(conn, identity, print)
    told = asyncio.get_running_loop().call_later(SLOW_WAIT_S, print, seek.slow)
    try:
        return await seek.find(conn, identity, print)
    finally:
        told.cancel()


async def play(conn: Connection, identity: Identity, seek: Seek) -> int:
    """Sign in, find a table (the last one, or a new one), and play it to the end."""
    style = Style(colour_wanted(), symbols=symbols_wanted())
    if sys.stdout.isatty():  # a person waits: the client is up (scripts read no more)
        print(f"Signing in at {conn.server}…", flush=True)
    await sign_in(conn, say=print, countdown=count_in_lines)
    if seek.instead:
        kept = await matchmaking.kept_table(conn, identity, print)
        if kept is not None:
            raise matchmaking.seat_kept(conn, identity, kept[0].table_id, seek.instead)
        found = None
    else:
        found = await matchmaking.resume(conn, identity, print)
    if found is None:
        match = await _find(seek, conn, identity)
        view = await matchmaking.open_table(conn, identity, match, print)
        seated = f"seat {view.my_seat + 1}" if view.HasField("my_seat") else "no seat"
        print(f"Table {match.table_id} found: you play {seated}.")
    else:
        _, view = found
    code = await Game(conn, view, style).run()
    with contextlib.suppress(Refusal):
        final = await conn.view(view.table_id)
        if not matchmaking.still_playing(final):
            identity.forget_match()
    return code
