"""One short sentence per table event, for the running commentary of a game."""

from __future__ import annotations

from collections.abc import Iterable

from services.common.pb.rummy.v1 import cards_pb2, table_pb2

from .cards import Style
from .render import game_text, round_text, seat_name


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
        swap = event.joker_swapped
        return (
            f"{who} took the joker from [{swap.meld.id}], "
            f"putting in {_cards(swap.replacements, style)}."
        )
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
