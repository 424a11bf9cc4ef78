"""What the full-screen table shows, as plain values built from one `TableView`.

Everything here is a pure function of the view, the server's clock and the
player's selection, so the screen can be tested without a terminal and the
widgets only lay these values out. Text comes styled by `Style` (ANSI colours,
or none under NO_COLOR); the widgets turn it into Rich text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.common.pb.rummy.v1 import cards_pb2, table_pb2

from ..cards import HAND_SUITS, Style, is_joker, plural, rank_key
from ..moves_now import Choice, choices
from ..render import (
    PLAYING_PHASES,
    Clock,
    is_mine,
    meld_cards,
    my_turn,
    round_text,
    seat_name,
    seat_notes,
    seconds,
)


@dataclass(frozen=True, slots=True)
class HandCard:
    id: int
    code: str
    position: int
    """1-based, in the order shown: what the player types to pick the card."""
    group: int
    """Cards of one suit share a group (jokers are the last group)."""


@dataclass(frozen=True, slots=True)
class SeatRow:
    seat: int
    name: str
    cards: int
    score: int
    turn: bool
    notes: str
    """`opened`, `left`, `out`, `away`: what else is true of the seat."""


@dataclass(frozen=True, slots=True)
class MeldRow:
    id: int
    owner: str
    cards: str
    """The cards, each joker with what it stands for (styled)."""


def sorted_hand(hand: Sequence[cards_pb2.Card]) -> list[HandCard]:
    """The hand as shown: grouped by suit (♠ ♥ ♣ ♦, black and red alternate),
    ace low within a suit, jokers last; positions count from 1."""
    order = {suit: i for i, suit in enumerate(HAND_SUITS)}

    def key(card: cards_pb2.Card) -> tuple[int, int, int]:
        if is_joker(card.code):
            return (len(order), 0, card.id)
        return (order[card.code[1]], rank_key(card.code), card.id)

    shown = sorted(hand, key=key)
    return [
        HandCard(card.id, card.code, position, key(card)[0])
        for position, card in enumerate(shown, start=1)
    ]


def title(view: table_pb2.TableView) -> str:
    """`Round 2 · turn 14/120 · cafe · open at 51`."""
    if view.phase == table_pb2.PHASE_GAME_OVER:
        return f"Game over · {view.ruleset}"
    parts = [f"Round {view.round}", f"turn {view.turn}/{view.turn_cap}", view.ruleset]
    if view.rules.opening_threshold:
        parts.append(f"open at {view.rules.opening_threshold}")
    if view.rules.HasField("reshuffles_left"):
        parts.append(plural(view.rules.reshuffles_left, "reshuffle") + " left")
    contract = contract_text(view)
    if contract:
        parts.append(contract)
    return " · ".join(parts)


def contract_text(view: table_pb2.TableView) -> str:
    """`contract`: what this deal asks to lay down first, `contract: 2 groups and
    1 run` ('' in other rule sets). Sizes are told when they are not the usual
    (groups of 3, runs of 4)."""
    if not view.rules.HasField("contract_due") or view.phase not in PLAYING_PHASES:
        return ""
    due = view.rules.contract_due
    parts = []
    if due.groups:
        size = due.min_group_size or 3
        parts.append(plural(due.groups, "group") + (f" of {size}" if size != 3 else ""))
    if due.runs:
        size = due.min_run_size or 4
        parts.append(plural(due.runs, "run") + (f" of {size}" if size != 4 else ""))
    text = " and ".join(parts) or "nothing"
    if due.no_final_discard:
        text += ", no discard"
    return f"contract: {text}"


def seat_rows(view: table_pb2.TableView) -> list[SeatRow]:
    """One row per seat, in seat order; a person whose connection dropped is `away`."""
    rows = []
    playing = view.phase in PLAYING_PHASES
    for seat in view.seats:
        name = seat.display_name or f"Seat {seat.seat + 1}"
        if is_mine(view, seat.seat):
            name += " (you)"
        elif seat.is_bot:
            name += " (bot)"
        notes = seat_notes(view, seat, out="out")
        rows.append(
            SeatRow(
                seat=seat.seat,
                name=name,
                cards=seat.card_count,
                score=seat.score_total,
                turn=playing and seat.seat == view.current_seat,
                notes=" ".join(notes),
            )
        )
    return rows


def meld_rows(view: table_pb2.TableView, style: Style) -> list[MeldRow]:
    return [
        MeldRow(meld.id, seat_name(view, meld.owner_seat), meld_cards(meld, style))
        for meld in view.melds
    ]


def piles_text(view: table_pb2.TableView, style: Style) -> str:
    """`Stock 34 · Discard 7♠ (12)`."""
    top = style.card(view.discard_top.code) if view.HasField("discard_top") else "empty"
    return f"Stock {view.stock_size} · Discard {top} ({view.discard_size})"


def turn_text(view: table_pb2.TableView, clock: Clock, style: Style) -> str:
    """The first line of the status bar: whose turn, with the live countdown, and a
    discard on offer (`contract`) with its own."""
    if view.phase == table_pb2.PHASE_GAME_OVER:
        return style.bold("Game over")
    if view.phase not in PLAYING_PHASES:
        return "Between rounds"
    left = clock.remaining(view)
    timer = f" · {seconds(left)} s" if left is not None else ""
    if my_turn(view):
        todo = "draw a card" if view.phase == table_pb2.PHASE_DRAW else "play, then discard"
        text = style.bold(f"Your turn{timer}") + f": {todo}"
    else:
        text = f"{seat_name(view, view.current_seat)}'s turn{timer}"
    if view.HasField("claim_window") and view.HasField("my_seat"):
        window = view.claim_window
        card = style.card(window.card.code)
        if window.claimed_by_me:
            text += f" · you claimed {card}"
        elif window.HasField("discarded_by_seat") and is_mine(view, window.discarded_by_seat):
            text += f" · your {card} is on offer to the others"
        elif not my_turn(view) or view.phase != table_pb2.PHASE_DRAW:
            text += f" · {card} on offer, {seconds(clock.until(window.closes_at))} s to claim"
    return text


def keys_text(
    view: table_pb2.TableView, style: Style, moves: Sequence[Choice] | None = None
) -> str:
    """The second line of the status bar: the moves legal now with their keys,
    then the keys that always work."""
    moves = choices(view) if moves is None else moves
    shown = [f"{style.bold(c.key)} {c.label}" for c in moves]
    if view.HasField("my_seat") and view.phase in PLAYING_PHASES:
        shown.append(f"{style.bold('h')} hint")
    shown.append(f"{style.bold('?')} help")
    shown.append(f"{style.bold('q')} leave" if view.HasField("my_seat") else "q quit")
    return "  ".join(shown)


def hand_title(view: table_pb2.TableView) -> str:
    if not view.HasField("my_seat"):
        return "Watching as a spectator"
    jokers = sum(1 for c in view.hand if is_joker(c.code))
    text = f"Your hand: {plural(len(view.hand), 'card')}"
    return text + (f", {plural(jokers, 'joker')}" if jokers else "")


def result_lines(
    view: table_pb2.TableView, result: table_pb2.RoundResult, style: Style
) -> list[str]:
    """A round's end as at a real table: why it ended, then each seat's cards laid
    face up, its points for the round and its total."""
    why = round_text(view, result).splitlines()[0].partition(": ")[2]
    lines = [why[0].upper() + why[1:] if why else ""]
    if result.doubled:
        lines.append("Scores are doubled this round.")
    width = max((len(seat_name(view, s.seat)) for s in result.scores), default=4)
    for score in result.scores:
        name = seat_name(view, score.seat)
        if not result.cards_left_shown:
            held = ""
        elif score.cards_left:
            held = style.cards(c.code for c in score.cards_left)
            held += f" ({score.cards_left_points})"
        else:
            held = "no card left"
        lines.append(f"{name:<{width}}  {score.points:+4d}  total {score.total:<5} {held}")
    return lines
