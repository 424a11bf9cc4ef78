"""What the terminal shows of a table: one seat's `TableView` as text.

Everything here is a pure function of a view (and the clock), so it is easy to
test and the same text serves `play` and `watch`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from google.protobuf.timestamp_pb2 import Timestamp

from services.common.pb.rummy.v1 import cards_pb2, table_pb2
from services.game.rules import PRESETS, Scoring

from .cards import Style, group_hand, plural
from .moves_now import TAKE, choices

SUIT_LETTER = {
    cards_pb2.SUIT_SPADES: "S",
    cards_pb2.SUIT_HEARTS: "H",
    cards_pb2.SUIT_DIAMONDS: "D",
    cards_pb2.SUIT_CLUBS: "C",
}
END_REASON = {
    table_pb2.END_REASON_WENT_OUT: "{winner} went out",
    table_pb2.END_REASON_TURN_CAP: "the turn cap was reached; {winner} had the lightest hand",
    table_pb2.END_REASON_BLOCKED: "the deal was blocked; {winner} had the lightest hand",
    table_pb2.END_REASON_ROUNDS_PLAYED: "every round was played",
    table_pb2.END_REASON_LAST_STANDING: "{winner} is the last player standing",
    table_pb2.END_REASON_OTHERS_LEFT: "everyone else left",
    table_pb2.END_REASON_TARGET_REACHED: "{winner} reached the target",
    table_pb2.END_REASON_ENDED_BY_OPERATOR: "the people who run the game ended it",
}
PLAYING_PHASES = (table_pb2.PHASE_DRAW, table_pb2.PHASE_PLAY)


class Clock:
    """The server's clock as seen from here: countdowns use `turn_deadline -
    server_time`, so a wrong local clock does not matter, only its offset."""

    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self._now = now
        self.offset = 0.0

    def sync(self, view: table_pb2.TableView) -> None:
        if view.HasField("server_time"):
            self.offset = view.server_time.ToMilliseconds() / 1000 - self._now()

    def until(self, deadline: Timestamp) -> float:
        """Seconds left until a server instant (0 once it is past)."""
        return max(0.0, deadline.ToMilliseconds() / 1000 - (self._now() + self.offset))

    def remaining(self, view: table_pb2.TableView) -> float | None:
        """Seconds left in the current turn, or None when no turn is running."""
        if view.phase not in PLAYING_PHASES or not view.HasField("turn_deadline"):
            return None
        return self.until(view.turn_deadline)


def follow_resume(view: table_pb2.TableView, event: table_pb2.TableEvent) -> bool:
    """A `TurnResumed` for the turn in ``view``: its new deadline (and the claim
    window's) put in the view, so the countdown shows the time given back at once,
    not after the view is fetched again. Whether the view changed."""
    if not event.HasField("turn_resumed") or not view.HasField("turn_deadline"):
        return False
    resumed = event.turn_resumed
    if resumed.turn != view.turn or event.seat != view.current_seat:
        return False  # another turn: the view fetched next tells it
    view.turn_deadline.CopyFrom(resumed.deadline)
    if resumed.HasField("claim_deadline") and view.HasField("claim_window"):
        view.claim_window.closes_at.CopyFrom(resumed.claim_deadline)
    return True


def seconds(left: float) -> int:
    """Whole seconds shown for a countdown: rounded up, so 0 means the time is up."""
    return int(left + 0.999)


def is_mine(view: table_pb2.TableView, seat: int) -> bool:
    return view.HasField("my_seat") and view.my_seat == seat


def seat_name(view: table_pb2.TableView, seat: int, *, you: str = "you") -> str:
    """'you' for the viewer's own seat, otherwise the player's name."""
    if is_mine(view, seat):
        return you
    if 0 <= seat < len(view.seats):
        return view.seats[seat].display_name or f"Seat {seat + 1}"
    return f"Seat {seat + 1}"


def my_turn(view: table_pb2.TableView) -> bool:
    return view.phase in PLAYING_PHASES and is_mine(view, view.current_seat)


def joker_label(meld: table_pb2.MeldView, role: table_pb2.JokerRole, style: Style) -> str:
    """What a joker on the table stands for: `9♠`, or `7♦/7♣` for any missing suit."""
    rank = role.rank or "?"
    if role.suit in SUIT_LETTER:
        return style.card(rank + SUIT_LETTER[role.suit])
    taken = {c.code[1] for c in meld.cards if c.code != "JK"}
    named = {SUIT_LETTER[j.suit] for j in meld.jokers if j.suit in SUIT_LETTER}
    free = [s for s in "SHDC" if s not in taken | named]
    return "/".join(style.card(rank + s) for s in free) or rank


def meld_cards(meld: table_pb2.MeldView, style: Style) -> str:
    """`7♠ 8♠ JK(9♠) 10♠`: a meld's cards, each joker with what it stands for."""
    roles = {r.joker_card_id: r for r in meld.jokers}
    shown = []
    for card in meld.cards:
        text = style.card(card.code)
        if card.id in roles:
            text += f"({joker_label(meld, roles[card.id], style)})"
        shown.append(text)
    return " ".join(shown)


def meld_line(view: table_pb2.TableView, meld: table_pb2.MeldView, style: Style) -> str:
    """`[3] Bob: 7♠ 8♠ JK(9♠) 10♠`: numbered by id, as `l` and `s` name them."""
    owner = seat_name(view, meld.owner_seat)
    return f"  [{meld.id}] {owner}: {meld_cards(meld, style)}"


def hand_line(hand: Sequence[cards_pb2.Card], style: Style) -> str:
    """The hand sorted and grouped by suit: `Your hand (5): 7♠ 9♠   2♥ K♥   JK`."""
    groups = group_hand(c.code for c in hand)
    body = "   ".join(style.cards(g) for g in groups) or "(empty)"
    return f"Your hand ({len(hand)}): {body}"


def seat_notes(view: table_pb2.TableView, seat: table_pb2.SeatView, *, out: str) -> list[str]:
    """What else is true of a seat: opened, left, ``out`` (eliminated), away (a
    person whose connection dropped; the viewer knows where they are)."""
    notes = []
    if seat.has_opened:
        notes.append("opened")
    if seat.status == table_pb2.SEAT_STATUS_LEFT:
        notes.append("left")
    elif seat.status == table_pb2.SEAT_STATUS_ELIMINATED:
        notes.append(out)
    elif not seat.connected and not seat.is_bot and not is_mine(view, seat.seat):
        notes.append("away")
    return notes


def seat_lines(view: table_pb2.TableView, style: Style) -> list[str]:
    lines = []
    for seat in view.seats:
        marker = "▶" if view.phase in PLAYING_PHASES and seat.seat == view.current_seat else " "
        name = seat_name(view, seat.seat, you=f"{seat.display_name} (you)")
        if seat.is_bot:
            name += " (bot)"
        notes = seat_notes(view, seat, out="eliminated")
        count = plural(seat.card_count, "card")
        line = f" {marker} {name:<24} {count:>9}  {seat.score_total:>4} pts"
        if notes:
            line += "  " + ", ".join(notes)
        lines.append(line)
    return lines


def table_text(view: table_pb2.TableView, style: Style) -> str:
    """The whole screen for one view: seats, table melds, piles, the hand."""
    title = f"Round {view.round} · turn {view.turn} of {view.turn_cap} · {view.ruleset}"
    lines = [style.bold(f"── {title} ──"), *seat_lines(view, style)]
    lines.append("Table melds:")
    lines += [meld_line(view, m, style) for m in view.melds] or ["  (none yet)"]
    top = style.card(view.discard_top.code) if view.HasField("discard_top") else "(empty)"
    lines.append(
        f"Discard: {top}  ({view.discard_size} in the pile)"
        f"   Stock: {plural(view.stock_size, 'card')}"
    )
    if view.HasField("my_seat"):
        lines.append(hand_line(view.hand, style))
    else:
        lines.append(style.dim("Watching as a spectator."))
    return "\n".join(lines)


def turn_status(view: table_pb2.TableView, clock: Clock, style: Style) -> str:
    """Whose turn it is, what to do, and the countdown: the prompt of `play`. Only
    the moves the engine would take now are offered (`moves_now`)."""
    if view.phase == table_pb2.PHASE_GAME_OVER:
        return "Game over"
    if view.phase not in PLAYING_PHASES:
        return "Between rounds"
    left = clock.remaining(view)
    timer = f" ⏱ {seconds(left):>2}s" if left is not None else ""
    if not my_turn(view):
        name = seat_name(view, view.current_seat)
        return f"{name}'s turn{timer}{claim_status(view, clock, style)}"
    legal = choices(view)
    if view.phase == table_pb2.PHASE_DRAW:
        take = f"take {style.card(view.discard_top.code)} (t)" if TAKE in legal else ""
        todo = "draw (d)" + (f" or {take}" if take else "")
    else:
        todo = ", ".join(f"{c.label} ({c.key})" for c in legal) or "no move: wait for the clock"
    return style.bold(f"Your turn{timer}") + f": {todo}"


def claim_status(view: table_pb2.TableView, clock: Clock, style: Style) -> str:
    """`contract`: the discard on offer to this seat while a claim window is open."""
    if not view.HasField("claim_window") or not view.HasField("my_seat"):
        return ""
    window = view.claim_window
    card = style.card(window.card.code)
    if window.claimed_by_me:
        return f" · you claimed {card}"
    if window.HasField("discarded_by_seat") and window.discarded_by_seat == view.my_seat:
        return f" · your {card} is on offer to the others"
    return f" · claim {card} (c) ⏱ {seconds(clock.until(window.closes_at)):>2}s"


def round_text(view: table_pb2.TableView, result: table_pb2.RoundResult) -> str:
    winner = (
        seat_name(view, result.winner_seat, you="you")
        if result.HasField("winner_seat")
        else "nobody"
    )
    why = END_REASON.get(result.end_reason, "the round ended").format(winner=winner)
    scores = ", ".join(
        f"{seat_name(view, s.seat)} {s.points:+d} (total {s.total})" for s in result.scores
    )
    return f"Round {result.round} over: {why}.\n  Scores: {scores}"


def _leader(view: table_pb2.TableView, seats: Sequence[table_pb2.SeatView]) -> int | None:
    """The seat ahead on totals, as the engine picks a game's winner: the highest
    total where the winner collects (`rami51`), else the lowest; ties to the first."""
    if not seats:
        return None
    collects = view.ruleset in PRESETS and PRESETS[view.ruleset].scoring is Scoring.WINNER_COLLECTS
    sign = -1 if collects else 1
    return min(seats, key=lambda s: (sign * s.score_total, s.seat)).seat


def game_text(view: table_pb2.TableView, ended: table_pb2.GameEnded | None = None) -> str:
    """The final result, from the GameEnded event or the view's copy of it; from
    the seats' totals when a server too old to send it does not."""
    if ended is None and view.HasField("result"):
        ended = view.result
    if ended is not None:
        totals = [(t.seat, t.total) for t in ended.totals]
        winner = ended.winner_seat if ended.HasField("winner_seat") else None
        reason = ended.reason
        note = ended.note
    else:
        note = ""
        totals = [(s.seat, s.score_total) for s in view.seats]
        last = view.round_results[-1] if view.round_results else None
        playing = [s for s in view.seats if s.status == table_pb2.SEAT_STATUS_PLAYING]
        winner = _leader(view, playing or list(view.seats))
        reason = last.end_reason if last is not None else table_pb2.END_REASON_UNSPECIFIED
        if len(playing) == 1 and any(s.status == table_pb2.SEAT_STATUS_LEFT for s in view.seats):
            reason = table_pb2.END_REASON_OTHERS_LEFT
    who = seat_name(view, winner, you="you") if winner is not None else "nobody"
    verb = "win" if winner is not None and is_mine(view, winner) else "wins"
    why = END_REASON.get(reason, "the game ended").format(winner=who)
    if note:
        why = f"{why}: {note}"
    board = ", ".join(f"{seat_name(view, s)} {t}" for s, t in totals)
    return f"Game over: {who} {verb} ({why}).\n  Final totals: {board}"
