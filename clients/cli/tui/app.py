"""`rummy play`, `host` and `join` on the full screen: sign in, find a table, play
it, see each round's result, then play again or quit.

The whole journey runs as one worker (`journey`) that shows a screen for each
step and waits on it; the table itself is `TableScreen`. Nothing here draws the
table or knows the rules.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import RichLog, Static

from services.common.pb.rummy.v1 import table_pb2
from services.common.wire.refusals import Refusal

from .. import matchmaking
from ..cards import Style
from ..connection import Connection
from ..identity import Identity, LastMatch
from ..play import Seek
from ..reach import sign_in
from ..render import game_text
from ..watch import open_table
from .dialogs import Ask, Notice
from .session import TableSession
from .table_screen import TableScreen
from .widgets import styled

BOTS_OFFER_AFTER_S = 20.0
"""A player queueing alone this long is offered bots for the empty seats."""


@dataclass(frozen=True, slots=True)
class Journey:
    """What the player asked for on the command line."""

    conn: Connection
    identity: Identity
    seek: Seek
    with_bots: Seek | None = None
    """The same queue with bots filling the empty seats (offered after a wait)."""
    ask_name: bool = False
    """First run: ask the player's display name instead of taking the OS user's."""
    again: bool = True
    """Whether "play again" is offered once a game is over."""
    bots_offer_after_s: float = BOTS_OFFER_AFTER_S
    watching: str = ""
    """`rummy watch TABLE`: follow this table instead of finding one to play."""


class Waiting(Screen[None]):
    """A wait in words: signing in, queueing, hosting; q gives up, b takes bots."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "give_up", "give up"),
        Binding("b", "bots", "bots", show=False),
    ]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title
        self.bots_offered = asyncio.Event()
        self.bots_wanted = asyncio.Event()

    def compose(self) -> ComposeResult:
        yield Static(styled(self.title_text), id="title")
        yield RichLog(id="wait-log", wrap=True, markup=False)
        yield Static(id="wait-status")

    def on_mount(self) -> None:
        self.status("q gives up")

    def say(self, text: str) -> None:
        self.query_one(RichLog).write(styled(text))

    def status(self, text: str) -> None:
        self.query_one("#wait-status", Static).update(styled(text))

    def offer_bots(self) -> None:
        self.bots_offered.set()
        self.say("Nobody else yet. Press b to fill the table with bots now.")
        self.status("b play against bots   q gives up")

    def action_bots(self) -> None:
        if self.bots_offered.is_set():
            self.bots_wanted.set()

    def action_give_up(self) -> None:
        self.app.exit(130, message="Stopped: you are no longer waiting for a table.")


class RummyApp(App[int]):
    """The full-screen client."""

    CSS_PATH = "rummy.tcss"
    TITLE = "Rummy"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "step_away", "step away", priority=True, show=False)
    ]

    def __init__(self, journey: Journey, style: Style) -> None:
        super().__init__()
        self.journey = journey
        self.style = style
        self.say: Callable[[str], None] = lambda _text: None

    def on_mount(self) -> None:
        self.journey.conn.notify = lambda text: self.say(text)
        self.trip()

    def action_step_away(self) -> None:
        table = self.journey.identity.last_match(self.journey.conn.server)
        if table is not None and table.table_id:
            self.exit(130, message="Stopped. Your seat is kept: run `rummy play` to rejoin.")
        else:
            self.exit(130, message="Stopped: you are no longer waiting for a table.")

    @work(exclusive=True, group="journey")
    async def trip(self) -> None:
        try:
            code, message = await self.journey_steps()
        except Refusal as refused:
            code, message = 1, f"Error: {refused}"
        self.exit(code, message=message)

    async def journey_steps(self) -> tuple[int, str]:
        journey = self.journey
        if journey.ask_name:
            name = await self.push_screen_wait(
                Ask(
                    "Your name at the table (others see it):",
                    value=journey.conn.name,
                    placeholder="a name",
                )
            )
            if name:
                journey.conn.name = journey.identity.display_name(name)
        wait = Waiting(f"Signing in at {journey.conn.server}…")
        await self.push_screen(wait)
        self.say = wait.say
        await sign_in(journey.conn, say=wait.say, countdown=self.counter(wait))
        if journey.watching:
            return await self.follow_table(journey.watching)
        seek = journey.seek
        while True:
            view = await self.seat(seek, wait)
            outcome = await self.push_screen_wait(self.table_screen(view))
            if outcome == "left":
                return 0, "You left the table."
            if outcome == "quit":
                return 0, "Your seat is kept: run `rummy play` again to rejoin this table."
            final = await self.final_view(view.table_id)
            keys = [("p", "play again"), ("q", "quit")] if journey.again else [("q", "quit")]
            answer = await self.push_screen_wait(Notice("Game over", game_text(final), keys=keys))
            journey.identity.forget_match()
            if answer != "p":
                return 0, game_text(final)
            wait = Waiting("Looking for another table…")
            await self.switch_screen(wait)
            self.say = wait.say

    async def follow_table(self, table_id: str) -> tuple[int, str]:
        """Follow one table, from the viewer's seat or as a spectator, to its end."""
        found = await open_table(self.journey.conn, table_id)
        if isinstance(found, tuple):
            return found
        outcome = await self.push_screen_wait(self.table_screen(found))
        if outcome != "over":
            return 0, "Stopped watching."
        final = await self.final_view(table_id)
        await self.push_screen_wait(Notice("Game over", game_text(final), keys=[("q", "quit")]))
        return 0, game_text(final)

    def counter(self, wait: Waiting) -> Callable[[int], Awaitable[None]]:
        async def count(seconds: int) -> None:
            for left in range(seconds, 0, -1):
                wait.status(f"Trying again in {left} s · q gives up")
                await asyncio.sleep(1)
            wait.status("Trying again… · q gives up")

        return count

    async def seat(self, seek: Seek, wait: Waiting) -> table_pb2.TableView:
        """The table to play: the one this device keeps a seat at, else a new one."""
        journey = self.journey
        conn, identity = journey.conn, journey.identity
        if seek.instead:
            kept = await matchmaking.kept_table(conn, identity, wait.say)
            if kept is not None:
                raise matchmaking.seat_kept(conn, identity, kept[0].table_id, seek.instead)
        else:
            found = await matchmaking.resume(conn, identity, wait.say)
            if found is not None:
                return found[1]
        match = await self.find(seek, wait)
        return await matchmaking.open_table(conn, identity, match, wait.say)

    async def find(self, seek: Seek, wait: Waiting) -> LastMatch:
        """Wait for a match; queueing alone, bots are offered after a while."""
        journey = self.journey
        finding: asyncio.Future[LastMatch] = asyncio.ensure_future(
            seek.find(journey.conn, journey.identity, wait.say)
        )
        if journey.with_bots is None:
            return await finding
        offer = asyncio.get_running_loop().call_later(journey.bots_offer_after_s, wait.offer_bots)
        wanted = asyncio.create_task(wait.bots_wanted.wait())
        try:
            await asyncio.wait((finding, wanted), return_when=asyncio.FIRST_COMPLETED)
            if finding.done():
                return finding.result()
            finding.cancel()
            with contextlib.suppress(asyncio.CancelledError, Refusal):
                await finding
            wait.say("Filling the empty seats with bots…")
            return await journey.with_bots.find(journey.conn, journey.identity, wait.say)
        finally:
            offer.cancel()
            wanted.cancel()

    def table_screen(self, view: table_pb2.TableView) -> TableScreen:
        conn = self.journey.conn

        def session_of(
            changed: Callable[[], None], round_over: Callable[..., None]
        ) -> TableSession:
            session = TableSession(conn, view, self.style, changed=changed, round_over=round_over)
            self.say = session.say
            return session

        return TableScreen(session_of, self.style)

    async def final_view(self, table_id: str) -> table_pb2.TableView:
        return await self.journey.conn.view(table_id)
