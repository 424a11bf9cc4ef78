"""One seat at one table for the full-screen client: the view, the story so far,
and the calls that move the game. No widget here: the screen is told through
callbacks and draws what `view` and `log` hold.

The table's Watch stream is followed across reconnects; an event newer than the
view fetches a fresh one (one fetch for a burst of events); a move's answer
carries the view after it. Events are told in words as they come.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

import grpc

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.wire.refusals import Refusal

from ..cards import Style
from ..connection import Connection
from ..deckcheck import DeckCheck
from ..moves import Request
from ..narrator import Narrator
from ..render import Clock, follow_resume

LOG_LINES = 200
"""Sentences kept for the log pane (it shows the last ones that fit)."""


@dataclass(frozen=True, slots=True)
class RoundOver:
    """A round's end as the table told it: shown with every seat's cards."""

    result: table_pb2.RoundResult
    view: table_pb2.TableView
    deck: str = ""
    """Whether the round's deck, revealed as it ended, is the one committed to at the
    deal (`DeckCheck`'s sentence; empty when there was nothing to check)."""


class TableSession:
    """The seat's view of the table, kept fresh from the stream and the moves."""

    def __init__(
        self,
        conn: Connection,
        view: table_pb2.TableView,
        style: Style,
        *,
        changed: Callable[[], None],
        round_over: Callable[[RoundOver], None],
    ) -> None:
        self.conn = conn
        self.view = view
        self.style = style
        self.clock = Clock()
        self.clock.sync(view)
        self.narrator = Narrator(style, self.clock, commands=True)
        self.decks = DeckCheck()
        self.decks.adopt(view)
        self.log: deque[str] = deque(maxlen=LOG_LINES)
        self.over = view.phase == table_pb2.PHASE_GAME_OVER
        self.ended = asyncio.Event()
        if self.over:
            self.ended.set()
        self._changed = changed
        self._round_over = round_over
        self._stale = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._ending: RoundOver | None = None
        """A round ended, told once its deck is revealed (the next event)."""

    # --- what the screen reads ----------------------------------------------------

    def say(self, text: str) -> None:
        for line in text.splitlines():
            if line.strip():
                self.log.append(line)
        self._changed()

    def adopt(self, view: table_pb2.TableView) -> None:
        """Keep the newest view (answers and refreshes may arrive out of order)."""
        if view.version >= self.view.version:
            self.view = view
            self.clock.sync(view)
            self.decks.adopt(view)
            if view.phase == table_pb2.PHASE_GAME_OVER:
                self.over = True
        self._changed()

    # --- following the table -------------------------------------------------------

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._follow(), name="watch"),
            asyncio.create_task(self._refresher(), name="refresh"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []

    async def _follow(self) -> None:
        try:
            async for item in self.conn.watch(self.view.table_id, self.view.last_seq):
                if isinstance(item, table_pb2.TableView):
                    self.adopt(item)
                else:
                    self.on_event(item)
        except Refusal as refused:
            self.say(f"Stopped following the table: {refused}")
        self._round_ended()
        # The stream ends with the game (or was given up): the last word is the view's.
        if not self.over:
            with contextlib.suppress(Refusal):
                self.adopt(await self.conn.view(self.view.table_id))
        self.ended.set()

    async def _refresher(self) -> None:
        """Fetch the view once a burst of events is over (one fetch per burst)."""
        while True:
            await self._stale.wait()
            await asyncio.sleep(0)  # let the rest of the burst in
            self._stale.clear()
            with contextlib.suppress(Refusal):
                self.adopt(await self.conn.view(self.view.table_id))

    def on_event(self, event: table_pb2.TableEvent) -> None:
        kind = event.WhichOneof("payload")
        text = self.narrator.tell(event, self.view)
        if text:
            self.say(text)
        checked = self.decks.see(event)
        if checked:
            self.say(checked)
        if kind == "turn_resumed":
            follow_resume(self.view, event)  # the countdown follows the time given back
        if kind == "player_connection" and 0 <= event.seat < len(self.view.seats):
            # Presence moves no version: the view is told here, not fetched again.
            self.view.seats[event.seat].connected = event.player_connection.connected
        if kind == "round_ended":
            self._round_ended()
            self._ending = RoundOver(event.round_ended.result, self.view)
        elif kind == "deck_revealed" and self._ending is not None:
            self._round_ended(checked or "")
        elif kind != "player_connection":
            self._round_ended()  # no deck to check: the result is told as it is
        if kind == "game_ended":
            self.over = True
        if event.version > self.view.version or kind in ("round_ended", "game_ended"):
            self._stale.set()
        self._changed()

    def _round_ended(self, deck: str = "") -> None:
        """Tell the round that ended, with its deck's check: the engine reveals the
        deck in the event right after the round's result."""
        ending, self._ending = self._ending, None
        if ending is not None:
            self._round_over(replace(ending, deck=deck))

    # --- the player's moves ----------------------------------------------------------

    async def send(self, request: Request) -> Refusal | None:
        """Send a move; the view after it, or the refusal (the view is fetched again
        when the refusal says the table moved on)."""
        try:
            reply = await self.conn.act(request.method, request.message)
        except Refusal as refused:
            if refused.code == grpc.StatusCode.ABORTED:
                with contextlib.suppress(Refusal):
                    self.adopt(await self.conn.view(self.view.table_id))
            return refused
        self.adopt(reply.view)
        return None

    async def hint(self) -> game_pb2.GetHintResponse | Refusal:
        try:
            reply: game_pb2.GetHintResponse = await self.conn.call(
                "GetHint", game_pb2.GetHintRequest(table_id=self.view.table_id)
            )
        except Refusal as refused:
            return refused
        return reply

    async def leave(self) -> Refusal | None:
        request = Request("Leave", game_pb2.LeaveRequest(table_id=self.view.table_id))
        return await self.send(request)
