"""One short sentence per table event, for the running commentary of a game.

`narrate` tells one event by itself; a `Narrator` follows a table's events in
order, and tells a joker swap with the move that placed the joker (a lay-off, or
a new meld: the engine's next event) as one sentence. It also keeps what later
sentences need: who drew before a claim window opened and which card it offers,
and the card a player took from the discard pile, should their time run out.
"""

from __future__ import annotations

from collections.abc import Iterable

from services.common.pb.rummy.v1 import cards_pb2, table_pb2
from services.game.rules import PRESETS

from .cards import Style
from .discards import (
    claim_text,
    offer_text,
    owed,
    passed_text,
    penalty_text,
    taken_back,
    window_discarder,
    window_left,
)
from .render import Clock, game_text, is_mine, meld_cards, round_text, seat_name


def _who(view: table_pb2.TableView, event: table_pb2.TableEvent) -> str:
    if not event.HasField("seat"):
        return "The table"
    return seat_name(view, event.seat, you="You")


def _object(who: str) -> str:
    return "you" if who == "You" else who


def _cards(event_cards: Iterable[cards_pb2.Card], style: Style) -> str:
    return style.cards(c.code for c in event_cards)


def narrate(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str | None:
    """The sentence for `event` as `view`'s seat sees it; None for the quiet ones."""
    who = _who(view, event)
    kind = event.WhichOneof("payload")
    if kind == "dealt":
        dealt = event.dealt
        top = ""
        if dealt.HasField("discard_top"):
            top = f" {style.card(dealt.discard_top.code)} turned up."
        each = max(dealt.hand_sizes, default=len(dealt.hand))
        return f"Round {dealt.round} dealt: {each} cards each.{top}"
    if kind == "drew":
        if event.drew.HasField("card"):
            return f"{who} drew {style.card(event.drew.card.code)} from the stock."
        return f"{who} drew from the stock."
    if kind == "took_discard":
        return f"{who} took {style.card(event.took_discard.card.code)} from the discard pile."
    if kind == "melded":
        laid = " and ".join(f"[{m.id}] {_cards(m.cards, style)}" for m in event.melded.melds)
        return f"{who} laid down {laid}."
    if kind == "laid_off":
        laid_off = event.laid_off
        return f"{who} laid off {_cards(laid_off.cards, style)} on [{laid_off.meld.id}]."
    if kind == "joker_swapped":
        return swap_text(event, view, style)
    if kind == "discarded":
        card = style.card(event.discarded.card.code)
        if event.discarded.automatic:
            return f"Time ran out: {card} was discarded for {_object(who)}."
        return f"{who} discarded {card}."
    if kind == "turn_passed":
        return passed_text(event, view, style, taken_back(event, view))
    if kind == "turn_resumed":
        stopped = event.turn_resumed.stopped_for.seconds
        whose = "your" if who == "You" else f"{who}'s"
        return (
            f"The game could not be reached for {stopped} s: {whose} turn goes on"
            " with the time it had left."
        )
    if kind == "reposed":
        return f"{who} put the {style.card(event.reposed.card.code)} back on the discard pile."
    if kind == "claim_window_opened":
        left = window_left(event)
        return offer_text(
            event,
            view,
            style,
            drawer=view.current_seat,
            left=left,
            discarder=window_discarder(view),
        )
    if kind == "claim_made":
        offer = view.claim_window.card.code if view.HasField("claim_window") else ""
        return claim_text(event.seat, view, style, offer)
    if kind == "claimed":
        claimed = event.claimed
        got = f"{who} got the {style.card(claimed.card.code)}"
        return f"{got}{penalty_text(claimed, style, mine=is_mine(view, event.seat))}."
    if kind == "claim_window_closed":
        card = style.card(event.claim_window_closed.card.code)
        return f"Nobody took the {card}: the claim window is closed."
    if kind == "reshuffled":
        size = event.reshuffled.stock_size
        return f"The stock ran out: the discard pile was shuffled into a new stock of {size}."
    if kind == "player_left":
        return f"{who} left the table."
    if kind == "player_eliminated":
        return f"{who} reached {event.player_eliminated.total} points and is out."
    if kind == "bought_back":
        bought = event.bought_back
        return (
            f"{who} reached the cap and bought back in at {bought.total} points"
            f" (buy-back {bought.used})."
        )
    if kind == "player_connection":
        if who == "You":
            return None  # the player knows; a stream that was down catches up quietly
        if event.player_connection.connected:
            return f"{who} is back at the table."
        return f"{who} lost the connection: their turns go on the clock."
    if kind == "card_announced":
        return f"{who}: “Carte !” (one card left)."
    if kind == "round_ended":
        return round_text(view, event.round_ended.result)
    if kind == "game_ended":
        return game_text(view, event.game_ended)
    return None


def swap_text(
    event: table_pb2.TableEvent,
    view: table_pb2.TableView,
    style: Style,
    placed_by: table_pb2.TableEvent | None = None,
) -> str:
    """A joker swap, and where the joker went: laid off or melded anew, as the event
    that placed it (``placed_by``) says, else just the meld it is in now; kept in
    hand when it went nowhere and the rule set allows that (`classic`)."""
    swap = event.joker_swapped
    took = (
        f"{_who(view, event)} took the joker from [{swap.meld.id}], "
        f"putting in {_cards(swap.replacements, style)}"
    )
    if not swap.HasField("placed_in"):
        rules = PRESETS.get(view.ruleset)
        kept = rules is not None and not rules.retrieved_joker_must_be_melded
        return f"{took}, and kept it in hand." if kept else f"{took}."
    placed = swap.placed_in
    shown = meld_cards(placed, style)
    placing = placed_by.WhichOneof("payload") if placed_by is not None else None
    if placing == "melded":
        return f"{took}, and laid it down in a new meld: [{placed.id}] {shown}."
    if placing == "laid_off":
        return f"{took}, and laid it off on [{placed.id}]: {shown}."
    return f"{took}, and put it in [{placed.id}]: {shown}."


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
