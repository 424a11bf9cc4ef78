"""One short sentence per table event, for the running commentary of a game.

`TELLINGS` says, for every kind of event (the `TableEvent.payload` field), what
is said of it and whether the player's own event of that kind was told already by
the answer to their move. `narrate` tells one event by itself; a `Narrator`
(`narrator.py`) follows a table's events in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from services.common.pb.rummy.v1 import cards_pb2, table_pb2
from services.game.rules import PRESETS

from .cards import Style
from .discards import (
    claim_text,
    offer_text,
    passed_text,
    penalty_text,
    taken_back,
    window_discarder,
    window_left,
)
from .render import game_text, is_mine, meld_cards, round_text, seat_name


def _who(view: table_pb2.TableView, event: table_pb2.TableEvent) -> str:
    if not event.HasField("seat"):
        return "The table"
    return seat_name(view, event.seat, you="You")


def _object(who: str) -> str:
    return "you" if who == "You" else who


def _cards(event_cards: Iterable[cards_pb2.Card], style: Style) -> str:
    return style.cards(c.code for c in event_cards)


def _dealt(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    dealt = event.dealt
    top = ""
    if dealt.HasField("discard_top"):
        top = f" {style.card(dealt.discard_top.code)} turned up."
    each = max(dealt.hand_sizes, default=len(dealt.hand))
    return f"Round {dealt.round} dealt: {each} cards each.{top}"


def _drew(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    who = _who(view, event)
    if event.drew.HasField("card"):
        return f"{who} drew {style.card(event.drew.card.code)} from the stock."
    return f"{who} drew from the stock."


def _took_discard(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    card = style.card(event.took_discard.card.code)
    return f"{_who(view, event)} took {card} from the discard pile."


def _melded(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    laid = " and ".join(f"[{m.id}] {_cards(m.cards, style)}" for m in event.melded.melds)
    return f"{_who(view, event)} laid down {laid}."


def _laid_off(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    laid_off = event.laid_off
    cards = _cards(laid_off.cards, style)
    return f"{_who(view, event)} laid off {cards} on [{laid_off.meld.id}]."


def _discarded(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    who = _who(view, event)
    card = style.card(event.discarded.card.code)
    if event.discarded.automatic:
        return f"Time ran out: {card} was discarded for {_object(who)}."
    return f"{who} discarded {card}."


def _turn_passed(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    return passed_text(event, view, style, taken_back(event, view))


def _turn_resumed(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    who = _who(view, event)
    stopped = event.turn_resumed.stopped_for.seconds
    whose = "your" if who == "You" else f"{who}'s"
    return (
        f"The game could not be reached for {stopped} s: {whose} turn goes on"
        " with the time it had left."
    )


def _reposed(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    card = style.card(event.reposed.card.code)
    return f"{_who(view, event)} put the {card} back on the discard pile."


def _claim_window_opened(
    event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style
) -> str:
    return offer_text(
        event,
        view,
        style,
        drawer=view.current_seat,
        left=window_left(event),
        discarder=window_discarder(view),
    )


def _claim_made(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    offer = view.claim_window.card.code if view.HasField("claim_window") else ""
    return claim_text(event.seat, view, style, offer)


def _claimed(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    claimed = event.claimed
    got = f"{_who(view, event)} got the {style.card(claimed.card.code)}"
    return f"{got}{penalty_text(claimed, style, mine=is_mine(view, event.seat))}."


def _claim_window_closed(
    event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style
) -> str:
    card = style.card(event.claim_window_closed.card.code)
    return f"Nobody took the {card}: the claim window is closed."


def _reshuffled(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    size = event.reshuffled.stock_size
    return f"The stock ran out: the discard pile was shuffled into a new stock of {size}."


def _player_left(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    return f"{_who(view, event)} left the table."


def _player_eliminated(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    return f"{_who(view, event)} reached {event.player_eliminated.total} points and is out."


def _bought_back(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    bought = event.bought_back
    return (
        f"{_who(view, event)} reached the cap and bought back in at {bought.total} points"
        f" (buy-back {bought.used})."
    )


def _player_connection(
    event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style
) -> str | None:
    who = _who(view, event)
    if who == "You":
        return None  # the player knows; a stream that was down catches up quietly
    if event.player_connection.connected:
        return f"{who} is back at the table."
    return f"{who} lost the connection: their turns go on the clock."


def _card_announced(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    return f"{_who(view, event)}: “Carte !” (one card left)."


def _round_ended(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    return round_text(view, event.round_ended.result)


def _game_ended(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str:
    return game_text(view, event.game_ended)


def _quiet(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> None:
    """Nothing to say: a turn beginning shows in the prompt, a revealed deck is
    checked (`DeckCheck`) and told only if it does not match."""
    return None


def _always(event: table_pb2.TableEvent) -> bool:
    return True


def _never(event: table_pb2.TableEvent) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Telling:
    """What the commentary says of one kind of event."""

    sentence: Callable[[table_pb2.TableEvent, table_pb2.TableView, Style], str | None]
    answered: Callable[[table_pb2.TableEvent], bool] = _never
    """Whether the event, when the player's own, is a move of theirs whose answer
    told them already: said again, it would be said twice."""


TELLINGS: dict[str, Telling] = {
    "dealt": Telling(_dealt),
    "turn_started": Telling(_quiet),
    "drew": Telling(_drew, answered=_always),
    "took_discard": Telling(_took_discard, answered=_always),
    "reposed": Telling(_reposed, answered=_always),
    "melded": Telling(_melded, answered=_always),
    "laid_off": Telling(_laid_off, answered=_always),
    "joker_swapped": Telling(lambda e, v, s: swap_text(e, v, s), answered=_always),
    # A discard the clock made for the player is news to them.
    "discarded": Telling(_discarded, answered=lambda e: not e.discarded.automatic),
    "turn_passed": Telling(_turn_passed),
    "reshuffled": Telling(_reshuffled),
    "claim_window_opened": Telling(_claim_window_opened),
    "claimed": Telling(_claimed),
    "card_announced": Telling(_card_announced),
    "player_left": Telling(_player_left),
    "player_eliminated": Telling(_player_eliminated),
    "round_ended": Telling(_round_ended),
    "game_ended": Telling(_game_ended),
    "claim_made": Telling(_claim_made, answered=_always),
    "deck_revealed": Telling(_quiet),
    "bought_back": Telling(_bought_back),
    "claim_window_closed": Telling(_claim_window_closed),
    "turn_resumed": Telling(_turn_resumed),
    "player_connection": Telling(_player_connection),
}
"""Every `TableEvent.payload` field (a test checks that none is missing)."""


def narrate(event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style) -> str | None:
    """The sentence for `event` as `view`'s seat sees it; None for the quiet ones."""
    telling = TELLINGS.get(event.WhichOneof("payload") or "")
    return telling.sentence(event, view, style) if telling is not None else None


def answered(event: table_pb2.TableEvent) -> bool:
    """Whether ``event``, one of the player's own, tells what the answer to their
    move told them already (their draw, their meld...): not said again."""
    telling = TELLINGS.get(event.WhichOneof("payload") or "")
    return telling is not None and telling.answered(event)


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
