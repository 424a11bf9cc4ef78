"""A table's events told in order, for the running commentary of a game.

A `Narrator` tells each event as `narrate` does, but tells a joker swap with the
move that placed the joker (a lay-off, or a new meld: the engine's next event) as
one sentence. It also keeps what later sentences need: who drew before a claim
window opened and which card it offers, and the card a player took from the
discard pile, should their time run out.
"""

from __future__ import annotations

from services.common.pb.rummy.v1 import table_pb2

from .cards import Style
from .discards import (
    claim_text,
    offer_text,
    owed,
    passed_text,
    taken_back,
    window_discarder,
    window_left,
)
from .narrate import narrate, swap_text
from .render import Clock


def _places(swap: table_pb2.TableEvent, event: table_pb2.TableEvent) -> bool:
    """Whether ``event`` is the move placing the joker of ``swap``, its next event."""
    if event.seq != swap.seq + 1 or event.seat != swap.seat:
        return False
    where = swap.joker_swapped.placed_in.id
    kind = event.WhichOneof("payload")
    if kind == "laid_off":
        return event.laid_off.meld.id == where
    if kind == "melded":
        return [m.id for m in event.melded.melds] == [where]
    return False


class Narrator:
    """Tells a table's events in order (give it every one, told or not).

    ``clock``: the server's clock, for the time left to claim a discard;
    ``commands``: the viewer plays at this terminal and may type `c` to claim."""

    def __init__(self, style: Style, clock: Clock | None = None, *, commands: bool = False) -> None:
        self.style = style
        self.clock = clock
        self.commands = commands
        self._swap: tuple[table_pb2.TableEvent, table_pb2.TableView] | None = None
        """A swap whose joker was placed, waiting for the event that placed it."""
        self._turn: int | None = None
        """The seat whose turn began in the events told (None: began before them)."""
        self._drawer: int | None = None
        """The seat that drew last: the one that passed over a discard on offer."""
        self._offer = ""
        """The code of the discard on offer while a claim window is open."""
        self._discarder = -1
        """The seat that discarded the top card of the pile, or -1 (nobody since it
        came on top): it may not claim that card back."""
        self._taken: tuple[int, int, str] | None = None
        """(seat, card id, code): the card taken from the discard pile this turn and
        not used yet."""
        self._opened: set[int] = set()
        """Seats seen laying down a meld this round."""

    def tell(self, event: table_pb2.TableEvent, view: table_pb2.TableView) -> str | None:
        """The sentence for ``event``; None when there is nothing to say (yet)."""
        held, self._swap = self._swap, None
        if held is not None and _places(held[0], event):
            self._follow(event)
            return swap_text(held[0], held[1], self.style, placed_by=event)
        earlier = swap_text(held[0], held[1], self.style) if held is not None else None
        if event.WhichOneof("payload") == "joker_swapped" and event.joker_swapped.HasField(
            "placed_in"
        ):
            self._swap = (event, view)
            self._follow(event)
            return earlier
        text = self._text(event, view)
        self._follow(event)
        return "\n".join(t for t in (earlier, text) if t) or None

    def _text(self, event: table_pb2.TableEvent, view: table_pb2.TableView) -> str | None:
        """The sentence for an event, with what the events before it told."""
        kind = event.WhichOneof("payload")
        if kind == "turn_passed":
            return passed_text(event, view, self.style, self._back(event, view))
        if kind == "claim_window_opened":
            drawer = view.current_seat if self._drawer is None else self._drawer
            left = window_left(event, self.clock)
            return offer_text(
                event,
                view,
                self.style,
                drawer=drawer,
                left=left,
                commands=self.commands,
                discarder=self._discarder if self._discarder >= 0 else window_discarder(view),
            )
        if kind == "claim_made" and self._offer:
            return claim_text(event.seat, view, self.style, self._offer)
        return narrate(event, view, self.style)

    def _back(self, event: table_pb2.TableEvent, view: table_pb2.TableView) -> str:
        """The code of the taken discard a timed-out turn put back on the pile, or ''."""
        if event.turn_passed.reason == table_pb2.TURN_PASSED_REASON_LEFT:
            return ""
        if self._taken is not None and self._taken[0] == event.seat:
            opened = event.seat in self._opened
            return self._taken[2] if owed(view, event.seat, opened=opened) else ""
        if self._turn != event.seat:
            return taken_back(event, view)  # the card was taken before the events told
        return ""

    def _follow(self, event: table_pb2.TableEvent) -> None:
        """Keep what later sentences need: whose turn, the taken card, the offer."""
        kind = event.WhichOneof("payload")
        if kind == "dealt":
            self._opened.clear()
            self._turn = self._drawer = self._taken = None
            self._offer = ""
            self._discarder = -1
        elif kind == "turn_started":
            self._turn, self._taken = event.seat, None
        elif kind == "drew":
            self._drawer = event.seat
        elif kind == "discarded":
            self._discarder = event.seat
        elif kind == "took_discard":
            taken = event.took_discard.card
            self._taken = (event.seat, taken.id, taken.code)
        elif kind == "reposed":
            self._taken = None
        elif kind == "claim_window_opened":
            self._offer = event.claim_window_opened.card.code
        elif kind in ("claimed", "claim_window_closed"):
            self._offer = ""
        if kind in ("took_discard", "claimed", "reposed", "reshuffled"):
            self._discarder = -1  # the top card now is none that a seat just discarded
        if kind == "melded":
            self._opened.add(event.seat)
        if self._taken is not None and self._taken[1] in _used(event):
            self._taken = None


def _used(event: table_pb2.TableEvent) -> set[int]:
    """The ids of the cards a meld, lay-off or joker swap took from the hand."""
    kind = event.WhichOneof("payload")
    if kind == "melded":
        return {c.id for m in event.melded.melds for c in m.cards}
    if kind == "laid_off":
        return {c.id for c in event.laid_off.cards}
    if kind == "joker_swapped":
        swap = event.joker_swapped
        return {c.id for c in swap.replacements} | {c.id for c in swap.placed_in.cards}
    return set()
