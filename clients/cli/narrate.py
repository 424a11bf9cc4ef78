"""One short sentence per table event, for the running commentary of a game.

`narrate` tells one event by itself; a `Narrator` follows a table's events in
order, and tells a joker swap with the move that placed the joker (a lay-off, or
a new meld: the engine's next event) as one sentence.
"""

from __future__ import annotations

from collections.abc import Iterable

from services.common.pb.rummy.v1 import cards_pb2, table_pb2
from services.game.rules.ruleset import PRESETS

from .cards import Style
from .render import game_text, meld_cards, round_text, seat_name


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
        if event.turn_passed.reason == table_pb2.TURN_PASSED_REASON_LEFT:
            return f"{who} left during their turn."
        whose = "your" if who == "You" else f"{who}'s"
        if event.turn_passed.reason == table_pb2.TURN_PASSED_REASON_NO_MOVE:
            return f"Nothing could be played or discarded: {whose} turn passed."
        return f"Time ran out: {whose} turn passed."
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
    """Tells a table's events in order (give it every one, told or not)."""

    def __init__(self, style: Style) -> None:
        self.style = style
        self._swap: tuple[table_pb2.TableEvent, table_pb2.TableView] | None = None
        """A swap whose joker was placed, waiting for the event that placed it."""

    def tell(self, event: table_pb2.TableEvent, view: table_pb2.TableView) -> str | None:
        """The sentence for ``event``; None when there is nothing to say (yet)."""
        held, self._swap = self._swap, None
        if held is not None and _places(held[0], event):
            return swap_text(held[0], held[1], self.style, placed_by=event)
        earlier = swap_text(held[0], held[1], self.style) if held is not None else None
        if event.WhichOneof("payload") == "joker_swapped" and event.joker_swapped.HasField(
            "placed_in"
        ):
            self._swap = (event, view)
            return earlier
        text = narrate(event, view, self.style)
        return "\n".join(t for t in (earlier, text) if t) or None
