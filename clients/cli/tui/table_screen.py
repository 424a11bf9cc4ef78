"""The table, full screen: seats, melds, piles, the log, the hand, the status bar.

Keys make the moves (see `HELP`); the status bar lists the ones legal now and
shows a refusal's sentence and reason, leaving everything else as it was. The
screen dismisses itself with "over" when the game ends, "left" when the player
left it, and "quit" when they stepped away keeping their seat.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.events import Key, Resize
from textual.screen import Screen
from textual.widgets import RichLog, Static

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.wire.refusals import Refusal
from services.game.rules import Reason, RuleError, check_meld, laying_refusal, preset

from .. import commands as C
from ..cards import Style
from ..moves import MoveError, Request, hint_text, request_for, swap_plan, swap_refused
from ..render import meld_line
from ..viewstate import state_from_view
from . import model
from .dialogs import Ask, Choose, Confirm, Notice
from .selection import DIGIT_WAIT_S, Selection
from .session import RoundOver, TableSession
from .widgets import Hand, MeldLine, Melds, Seats, StatusBar, styled

WAIT_FOR_MORE = (Reason.OPENING_TOO_LOW, Reason.CONTRACT_UNMET)
"""Refusals of a first laying that more melds may lift: the melds staged so far wait."""
TALL = 34
"""Rows from which the log grows with the screen."""
TICK_S = 0.5
"""How often the countdowns are redrawn."""
HELP = """\
Pick cards: ←/→ move, Space picks the card under the cursor, or type its
position number (shown under it), or click it. Esc clears the picks.
  d  draw from the stock          t  take the discard
  m  meld the picked cards (an opening of several: m for each, Enter lays them)
  l  lay off the picked cards, then pick the meld (or click a meld)
  s  swap a joker for the picked card, then say where the joker goes
  x  discard the picked card (or the one under the cursor)
  r  put the taken discard back (rami51: Reposer)
  c  claim the discard on offer (contract: Puis-je ?)
  h  hint          :  type a move as in the line client (m 7S 8S 9S)
  q  leave the table for good (asks first); Ctrl-C steps away, keeping your seat"""


class TableScreen(Screen[str]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor(-1)", "left", show=False),
        Binding("right", "cursor(1)", "right", show=False),
        Binding("space", "pick", "pick", show=False),
        Binding("escape", "clear", "clear", show=False),
        Binding("enter", "lay_staged", "lay", show=False),
        Binding("d", "draw", "draw", show=False),
        Binding("t", "take", "take", show=False),
        Binding("r", "reposer", "put back", show=False),
        Binding("m", "meld", "meld", show=False),
        Binding("l", "lay_off", "lay off", show=False),
        Binding("s", "swap", "swap", show=False),
        Binding("x", "discard", "discard", show=False),
        Binding("c", "claim", "claim", show=False),
        Binding("h", "hint", "hint", show=False),
        Binding("question_mark", "help", "help", show=False),
        Binding("colon", "type_move", "type", show=False),
        Binding("q", "leave", "leave", show=False),
    ]

    def __init__(self, session_of: Any, style: Style) -> None:
        """``session_of``: makes the `TableSession` given this screen's callbacks."""
        super().__init__()
        self.style = style
        self.session: TableSession = session_of(self.changed, self.round_over)
        self.selection = Selection()
        self.message = ""
        self.busy = False
        self._digit_timer: asyncio.TimerHandle | None = None
        self.digit_wait_s = DIGIT_WAIT_S
        """How long a typed position waits for its second digit (any other key ends it)."""
        self._drawn = False
        """Whether the widgets are there to draw on (from `on_mount`)."""
        self._logged = 0

    # --- layout -----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(id="title")
        with Horizontal(id="top"):
            with Vertical(id="seats-box"):
                yield Seats(id="seats")
            yield Melds(id="melds")
        yield RichLog(id="log", max_lines=200, wrap=True, markup=False)
        yield Hand(id="hand")
        yield StatusBar(id="status")

    def on_mount(self) -> None:
        self.query_one("#seats-box").border_title = "Players"
        self.query_one("#melds").border_title = "Table melds"
        self.query_one("#log").border_title = "What happened"
        self.query_one(Hand).focus()
        self._drawn = True
        self.session.start()
        self.set_interval(TICK_S, self.tick)
        self.changed()
        self.wait_for_end()

    async def on_unmount(self) -> None:
        self._drawn = False
        await self.session.stop()

    @work(exclusive=True, group="end")
    async def wait_for_end(self) -> None:
        await self.session.ended.wait()
        self.changed()
        await self.session.stop()
        while self.app.screen is not self:  # the last round's result is still read
            await asyncio.sleep(0.1)
        self.dismiss("over" if self.session.over else "quit")

    # --- drawing ------------------------------------------------------------------

    def on_resize(self, event: Resize) -> None:
        """A tall terminal gives the log as much room as the table (see the stylesheet)."""
        self.set_class(event.size.height >= TALL, "-tall")

    def changed(self) -> None:
        """The session's view or log changed: redraw what depends on them."""
        if not self._drawn:
            return
        view = self.session.view
        hand = model.sorted_hand(view.hand)
        self.selection.fit(hand)
        self.query_one("#title", Static).update(styled(model.title(view)))
        self.query_one(Seats).show(
            model.seat_rows(view),
            model.piles_text(view, self.style),
        )
        self.query_one(Melds).show(model.meld_rows(view, self.style))
        log = self.query_one(RichLog)
        lines = list(self.session.log)
        fresh = lines[self._logged :] if self._logged <= len(lines) else lines[-5:]
        for line in fresh:
            log.write(styled(line))
        self._logged = len(lines)
        labels = {c.id: self.style.card(c.code) for c in view.hand}
        self.query_one(Hand).border_title = model.hand_title(view)
        self.query_one(Hand).show(
            hand,
            labels,
            picked=set(self.selection.picked),
            staged=self.selection.staged_ids(),
            cursor=self.selection.cursor,
        )
        self.tick()

    def tick(self) -> None:
        view = self.session.view
        status = self.query_one(StatusBar)
        status.show(
            model.turn_text(view, self.session.clock, self.style),
            model.keys_text(view, self.style),
            self.message,
        )

    def tell(self, text: str) -> None:
        """A sentence in the status bar until the next key (a refusal, a hint)."""
        self.message = text
        self.tick()

    def round_over(self, ended: RoundOver) -> None:
        self.app.push_screen(results_notice(ended, self.style))

    # --- picking cards -----------------------------------------------------------

    def hand(self) -> list[model.HandCard]:
        return model.sorted_hand(self.session.view.hand)

    def on_key(self, event: Key) -> None:
        if event.character is not None and event.character.isdigit():
            event.stop()
            self._digit(event.character)
            return
        if self.selection.digits:
            self._digits_done()  # a move key ends a position being typed
        if self.message and event.key not in ("left", "right"):
            self.message = ""

    def _digit(self, digit: str) -> None:
        self._stop_digit_timer()
        card, more = self.selection.type_digit(digit, self.hand())
        if more:
            loop = asyncio.get_running_loop()
            self._digit_timer = loop.call_later(self.digit_wait_s, self._digits_done)
        elif card is not None:
            self.selection.toggle(card)
        self.changed()

    def _stop_digit_timer(self) -> None:
        if self._digit_timer is not None:
            self._digit_timer.cancel()
            self._digit_timer = None

    def _digits_done(self) -> None:
        self._stop_digit_timer()
        card = self.selection.typed_out(self.hand())
        if card is not None:
            self.selection.toggle(card)
        self.changed()

    def on_hand_toggled(self, message: Hand.Toggled) -> None:
        hand = self.hand()
        if 1 <= message.position <= len(hand):
            self.selection.cursor = message.position - 1
            self.selection.toggle(hand[message.position - 1])
            self.changed()

    def action_cursor(self, step: int) -> None:
        self.selection.move(self.hand(), step)
        self.changed()

    def action_pick(self) -> None:
        card = self.selection.cursor_card(self.hand())
        if card is not None:
            self.selection.toggle(card)
            self.changed()

    def action_clear(self) -> None:
        self.selection.clear()
        self.tell("")
        self.changed()

    # --- moves ------------------------------------------------------------------------

    @work(exclusive=True, group="move")
    async def send(self, request: Request, done: str = "") -> None:
        """Send a move; a refusal's sentence goes to the status bar, nothing else changes."""
        refused = await self.session.send(request)
        if refused is not None:
            self.tell(f"Refused: {refused}")
            return
        if done:
            self.tell(done)
        self.selection.clear()
        self.changed()

    def _typed(self, command: C.Command) -> None:
        try:
            self.send(request_for(self.session.view, command, self.style))
        except MoveError as error:
            self.tell(str(error))

    def action_draw(self) -> None:
        self._typed(C.Draw())

    def action_take(self) -> None:
        self._typed(C.Take())

    def action_reposer(self) -> None:
        self._typed(C.PutBack())

    def action_claim(self) -> None:
        self._typed(C.ClaimCommand())

    def action_discard(self) -> None:
        view = self.session.view
        picked = self.selection.picked
        if len(picked) > 1:
            self.tell("Pick one card to discard (Esc clears the picks).")
            return
        if picked:
            card = picked[0]
        else:
            under = self.selection.cursor_card(self.hand())
            if under is None:
                self.tell("You have no card to discard.")
                return
            card = under.id
        request = game_pb2.DiscardRequest(
            table_id=view.table_id, expected_version=view.version, card_id=card
        )
        self.send(Request("Discard", request))

    def action_meld(self) -> None:
        """The picked cards become a meld: laid at once, or staged while a first
        laying needs more (the table's threshold, the deal's contract)."""
        view = self.session.view
        if not self.selection.picked:
            if self.selection.staged:
                self.action_lay_staged()
            else:
                self.tell("Pick the cards of the meld first (Space, or their numbers).")
            return
        rules = preset(view.ruleset)
        try:
            check_meld(self.selection.picked, rules)
        except RuleError as error:
            self.tell(f"Not a meld: {error}")
            return
        self.selection.staged.append(list(self.selection.picked))
        self.selection.picked.clear()
        shapes = [check_meld(m, rules) for m in self.selection.staged]
        state = state_from_view(view)
        refusal = laying_refusal(state, view.my_seat, shapes) if view.HasField("my_seat") else None
        if refusal is not None and refusal.reason in WAIT_FOR_MORE:
            self.tell(
                f"{refusal}. Pick the next meld and press m; Enter lays them down, Esc clears."
            )
            self.changed()
            return
        self.action_lay_staged()

    def action_lay_staged(self) -> None:
        if not self.selection.staged:
            return
        view = self.session.view
        specs = [game_pb2.MeldSpec(card_ids=m) for m in self.selection.staged]
        request = game_pb2.MeldRequest(
            table_id=view.table_id, expected_version=view.version, melds=specs
        )
        self.send(Request("Meld", request))

    def _melds_to_pick(self, melds: list[table_pb2.MeldView]) -> list[tuple[str, str]]:
        return [(str(m.id), meld_line(self.session.view, m, self.style).strip()) for m in melds]

    @work(exclusive=True, group="ask")
    async def action_lay_off(self, meld_id: int | None = None) -> None:
        view = self.session.view
        if not self.selection.picked:
            self.tell("Pick the cards to lay off first, then press l.")
            return
        if not view.melds:
            self.tell("There is no meld on the table to lay off on.")
            return
        if meld_id is None:
            answer = await self.app.push_screen_wait(
                Choose("Lay off on which meld?", self._melds_to_pick(list(view.melds)))
            )
            if answer is None:
                return
            meld_id = int(answer)
        request = game_pb2.LayOffRequest(
            table_id=view.table_id,
            expected_version=view.version,
            meld_id=meld_id,
            card_ids=self.selection.picked,
        )
        self.send(Request("LayOff", request))

    def on_meld_line_picked(self, message: MeldLine.Picked) -> None:
        if self.selection.picked:
            self.action_lay_off(message.meld_id)

    @work(exclusive=True, group="ask")
    async def action_swap(self) -> None:
        view = self.session.view
        refused = swap_refused(view)
        if refused is not None:
            self.tell(f"Refused: {refused.message} [{refused.reason.value}]")
            return
        codes = {c.id: c.code for c in view.hand}
        picked = [codes[i] for i in self.selection.picked if i in codes]
        if not 1 <= len(picked) <= 2:
            self.tell("Pick the card the joker stands for (two for a brelan), then press s.")
            return
        with_jokers = [m for m in view.melds if any(c.code == "JK" for c in m.cards)]
        if not with_jokers:
            self.tell("No meld on the table holds a joker.")
            return
        answer = await self.app.push_screen_wait(
            Choose("Take the joker of which meld?", self._melds_to_pick(with_jokers))
        )
        if answer is None:
            return
        try:
            plan = swap_plan(view, C.SwapCommand(int(answer), tuple(picked)), self.style)
        except MoveError as error:
            self.tell(str(error))
            return
        options = [(f"lay:{m}", f"lay it off on [{m}]") for m, _ in plan.lay_offs]
        if plan.new_meld:
            options.append(
                ("new", f"a new meld: {self.style.cards(plan.example(view.hand).split())}")
            )
        if plan.may_keep:
            options.append(("keep", "keep it in hand"))
        if not options:
            self.tell("The joker would fit nowhere: keep the cards for another move.")
            return
        where = await self.app.push_screen_wait(Choose("Where does the joker go?", options))
        if where is None:
            return
        if where == "keep":
            request = plan.keep()
        elif where == "new":
            request = plan.meld_with(plan.new_meld)
        else:
            request = plan.lay_off(int(where.partition(":")[2]))
        self.send(request)

    @work(exclusive=True, group="ask")
    async def action_hint(self) -> None:
        reply = await self.session.hint()
        if isinstance(reply, Refusal):
            self.tell(f"No hint: {reply}")
            return
        text = hint_text(self.session.view, reply, self.style)
        self.tell(text.splitlines()[0])
        self.selection.picked = [i for m in reply.melds[:1] for i in m.card_ids]
        self.changed()

    @work(exclusive=True, group="ask")
    async def action_help(self) -> None:
        await self.app.push_screen_wait(Notice("Keys", HELP))

    @work(exclusive=True, group="ask")
    async def action_type_move(self) -> None:
        line = await self.app.push_screen_wait(
            Ask("Type a move (? lists them):", placeholder="m 7S 8S 9S")
        )
        if not line:
            return
        try:
            command = C.parse(line)
        except C.CommandError as error:
            self.tell(str(error))
            return
        match command:
            case C.Help():
                await self.app.push_screen_wait(Notice("Typed moves", C.HELP))
            case C.Hint():
                self.action_hint()
            case C.Quit():
                self.action_leave()
            case C.Nothing() | C.Show():
                pass
            case C.SwapCommand():
                self.tell("Swap with keys: pick the card, press s.")
            case _:
                self._typed(command)

    @work(exclusive=True, group="ask")
    async def action_leave(self) -> None:
        if not self.session.view.HasField("my_seat") or self.session.over:
            self.dismiss("quit")
            return
        sure = await self.app.push_screen_wait(
            Confirm("Leave this table for good? You lose the game. (Ctrl-C keeps your seat.)")
        )
        if not sure:
            return
        refused = await self.session.leave()
        if refused is not None:
            self.tell(f"Could not leave: {refused}")
            return
        await self.session.stop()
        self.dismiss("left")


def results_notice(ended: RoundOver, style: Style) -> Notice:
    """A round's end: why, then each seat's cards, points and total, and whether the
    deck was the one committed to at the deal."""
    lines = model.result_lines(ended.view, ended.result, style)
    if ended.deck:
        lines += ["", ended.deck]
    body = "\n".join(lines)
    return Notice(f"Round {ended.result.round} over", body)
