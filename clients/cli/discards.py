"""Sentences about the discard pile's side stories: `contract`'s claim window
("Puis-je ?"), and a card taken from the pile that goes back to it (`rami51`'s
Reposer, or a turn that ran out before the card was used)."""

from __future__ import annotations

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules import PRESETS, TakenDiscard

from .cards import Style
from .render import Clock, is_mine, seat_name, seconds


def window_left(event: table_pb2.TableEvent, clock: Clock | None = None) -> float | None:
    """Seconds left to claim the discard a claim window offers: by the server's
    clock when there is one, else as long as the window was opened for."""
    closes = event.claim_window_opened.closes_at
    if clock is not None:
        return clock.until(closes)
    if event.HasField("occurred_at"):
        return max(0.0, (closes.ToMilliseconds() - event.occurred_at.ToMilliseconds()) / 1000)
    return None


def offer_text(
    event: table_pb2.TableEvent,
    view: table_pb2.TableView,
    style: Style,
    *,
    drawer: int,
    left: float | None,
    commands: bool = False,
    discarder: int = -1,
) -> str:
    """`contract`'s claim window opening: the discard ``drawer`` passed over is on
    offer to the others for ``left`` seconds (when known); ``commands``: the viewer
    can type `c` to claim it, unless the viewer is the ``discarder``, who may not
    claim it back."""
    card = style.card(event.claim_window_opened.card.code)
    time = f" ({seconds(left)} s left)" if left else ""
    if is_mine(view, drawer):
        return f"The {card} is on offer to the other players{time}."
    if discarder >= 0 and is_mine(view, discarder):
        others = f"the players other than {seat_name(view, drawer)}"
        return f"The {card} you discarded is on offer to {others}{time}."
    if commands and view.HasField("my_seat"):
        return f"The {card} is on offer: type c to claim it{time}."
    return f"The {card} is on offer to the players other than {seat_name(view, drawer)}{time}."


def window_discarder(view: table_pb2.TableView) -> int:
    """The seat that discarded the card on offer, as the view tells it, or -1."""
    window = view.claim_window
    if view.HasField("claim_window") and window.HasField("discarded_by_seat"):
        return window.discarded_by_seat
    return -1


def claim_text(seat: int, view: table_pb2.TableView, style: Style, offer: str = "") -> str:
    """A seat's claim ("Puis-je ?") for the discard on offer (its code ``offer``, when known)."""
    who = seat_name(view, seat, you="You")
    card = f"the {style.card(offer)}" if offer else "the discard"
    if who == "You":
        return f"You claimed {card}: who gets it is settled when the claim window closes."
    return f"{who} asks for {card}: “Puis-je ?”"


def penalty_text(claimed: table_pb2.Claimed, style: Style, *, mine: bool) -> str:
    """The penalty a claim cost: the cards themselves only for the claimant's eyes."""
    count = claimed.penalty_count
    if not count:
        return ""
    drew = "a penalty card" if count == 1 else f"{count} penalty cards"
    seen = [c for c in claimed.penalty_cards if c.code] if mine else []
    shown = f": {style.cards(c.code for c in seen)}" if seen else ""
    return f" and drew {drew}{shown}"


def passed_text(
    event: table_pb2.TableEvent, view: table_pb2.TableView, style: Style, back: str = ""
) -> str:
    """A turn that passed; ``back``: the code of the card taken from the discard
    pile that went back to it (it had to be used this turn)."""
    who = seat_name(view, event.seat, you="You")
    reason = event.turn_passed.reason
    if reason == table_pb2.TURN_PASSED_REASON_LEFT:
        return f"{who} left during {'your' if who == 'You' else 'their'} turn."
    whose = "your" if who == "You" else f"{who}'s"
    if back:
        went = f"the {style.card(back)} went back to the discard pile and the turn passed"
        if reason == table_pb2.TURN_PASSED_REASON_NO_MOVE:
            return f"Nothing could be played or discarded: {went}."
        return f"{whose[0].upper()}{whose[1:]} time ran out: {went}."
    if reason == table_pb2.TURN_PASSED_REASON_NO_MOVE:
        return f"Nothing could be played or discarded: {whose} turn passed."
    return f"Time ran out: {whose} turn passed."


def taken_back(event: table_pb2.TableEvent, view: table_pb2.TableView) -> str:
    """The code of the viewer's own taken discard that a timed-out turn put back on the
    pile, as the view shows it (a `Narrator` follows every seat's); else ''."""
    if not (event.HasField("seat") and is_mine(view, event.seat)):
        return ""
    if not view.HasField("taken_discard_id") or view.current_seat != event.seat:
        return ""
    taken = next((c for c in view.hand if c.id == view.taken_discard_id), None)
    if taken is None or not owed(view, event.seat, opened=False):
        return ""
    return str(taken.code)


def owed(view: table_pb2.TableView, seat: int, *, opened: bool) -> bool:
    """Whether the rules make a seat use the card it took from the discard pile this
    turn (else, at a timeout, it goes back); ``opened``: the seat opened this round."""
    rules = PRESETS.get(view.ruleset)
    if rules is None:
        return False
    if rules.taken_discard is TakenDiscard.USE_THIS_TURN:
        return True
    has_opened = opened or (0 <= seat < len(view.seats) and view.seats[seat].has_opened)
    return rules.taken_discard is TakenDiscard.USE_IN_OPENING and not has_opened
