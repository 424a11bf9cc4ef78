"""`rummy replay TABLE` on the full screen: the finished game's table, step by
step, with every hand the replay shows, and whether every shuffle verifies.

The steps are made before the screen opens (`replay_table.steps`), so moving
through them is drawing only: nothing here calls the network.
"""

from __future__ import annotations

from typing import ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import RichLog, Static

from ..cards import Style
from ..replay_table import Replay, Step
from . import model, replay_model
from .dialogs import Ask
from .table_screen import TALL
from .widgets import Melds, Seats, StatusBar, styled


class ReplayScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,l,space", "step(1)", "next", show=False),
        Binding("left,h", "step(-1)", "back", show=False),
        Binding("n", "turn(1)", "next turn", show=False),
        Binding("p", "turn(-1)", "previous turn", show=False),
        Binding("r", "round", "round", show=False),
        Binding("g,home", "go(0)", "start", show=False),
        Binding("G,end", "go(-1)", "end", show=False),
        Binding("q,escape", "quit", "quit", show=False),
    ]

    def __init__(self, replay: Replay, style: Style) -> None:
        super().__init__()
        self.replay = replay
        self.style = style
        self.at = 0
        """Index of the step shown."""
        self.message = ""
        """A sentence in the status bar until the next key (a round that is not)."""
        self.turns = replay_model.turn_starts(replay.steps)
        self.rounds = replay_model.round_starts(replay.steps)

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal(id="top"):
            with Vertical(id="seats-box"):
                yield Seats(id="seats")
            yield Melds(id="melds")
        yield Static(id="hands")
        yield RichLog(id="log", wrap=True, markup=False)
        yield StatusBar(id="status")

    def on_mount(self) -> None:
        self.query_one("#seats-box").border_title = "Players"
        self.query_one("#melds").border_title = "Table melds"
        self.query_one("#hands").border_title = replay_model.hands_title(self.replay.first)
        self.query_one("#log").border_title = "What happened"
        self.query_one("#title", Static).update(styled(replay_model.title(self.replay.first)))
        self.show()

    def on_resize(self, event: Resize) -> None:
        self.set_class(event.size.height >= TALL, "-tall")

    @property
    def step(self) -> Step | None:
        return self.replay.steps[self.at] if self.replay.steps else None

    def show(self) -> None:
        step = self.step
        status = self.query_one(StatusBar)
        if step is None:
            status.show("This game's log holds no move.", replay_model.keys_text(self.style))
            return
        view = step.view
        self.query_one(Seats).show(model.seat_rows(view), model.piles_text(view, self.style))
        self.query_one(Melds).show(model.meld_rows(view, self.style))
        hands = "\n".join(replay_model.hand_lines(step, self.style))
        self.query_one("#hands", Static).update(styled(hands))
        log = self.query_one(RichLog)
        log.clear()
        sentences = replay_model.told(self.replay.steps, self.at)
        for n, sentence in enumerate(sentences, start=1):
            mine = n == len(sentences) and sentence == step.sentence
            log.write(styled(self.style.bold(sentence) if mine else sentence))
        total = len(self.replay.steps)
        status.show(
            replay_model.position_text(step, total, self.replay.shuffles),
            replay_model.keys_text(self.style),
            self.message,
        )

    def go(self, index: int) -> None:
        self.message = ""
        if self.replay.steps:
            self.at = max(0, min(index, len(self.replay.steps) - 1))
        self.show()

    # --- keys ----------------------------------------------------------------------

    def action_step(self, by: int) -> None:
        self.go(self.at + by)

    def action_turn(self, by: int) -> None:
        """To the start of the next turn, or of this one (of the one before, at its start)."""
        if by > 0:
            after = [i for i in self.turns if i > self.at]
            self.go(after[0] if after else len(self.replay.steps) - 1)
        else:
            before = [i for i in self.turns if i < self.at]
            self.go(before[-1] if before else 0)

    def action_go(self, index: int) -> None:
        self.go(index if index >= 0 else len(self.replay.steps) - 1)

    def jump_to_round(self, text: str | None) -> None:
        """To the deal of the round named (a number), or say which rounds there are."""
        wanted = int(text) if text and text.isdigit() else -1
        if wanted in self.rounds:
            self.go(self.rounds[wanted])
        elif text:
            rounds = len(self.rounds)
            self.message = f"There is no round {text[:8]}: this game has rounds 1 to {rounds}."
            self.show()

    @work(exclusive=True, group="ask")
    async def action_round(self) -> None:
        top = max(self.rounds, default=0)
        answer = await self.app.push_screen_wait(
            Ask(f"Jump to round (1 to {top}):", placeholder="a round number")
        )
        self.jump_to_round(answer)

    def action_quit(self) -> None:
        self.dismiss(None)


class ReplayApp(App[int]):
    """The full-screen replay: one screen, closed with q."""

    CSS_PATH = "rummy.tcss"
    TITLE = "Rummy replay"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "quit", priority=True, show=False)
    ]

    def __init__(self, replay: Replay, style: Style) -> None:
        super().__init__()
        self.replay = replay
        self.style = style

    def on_mount(self) -> None:
        self.push_screen(ReplayScreen(self.replay, self.style), lambda _: self.exit(0))
