"""What the replay screen shows at one step, as plain values: a pure function of
the replay's steps, so it is tested without a terminal (see `model` for the
table's own parts, which the replay shares)."""

from __future__ import annotations

from collections.abc import Sequence

from services.common.pb.rummy.v1 import player_pb2, table_pb2

from ..cards import Style, group_hand, plural
from ..render import PLAYING_PHASES
from ..replay_table import Step

NAME_WIDTH = 12
KEYS = (
    ("→", "next"),
    ("←", "back"),
    ("n/p", "turn"),
    ("r", "round"),
    ("g/G", "start/end"),
    ("q", "quit"),
)
SENTENCES = 3
"""Sentences the log shows: the step's own and the ones before it."""


def title(replay: player_pb2.GetReplayResponse) -> str:
    """`Replay · cafe · Pia won · 2 seats`."""
    winner = next((s for s in replay.seats if s.place == 1), None)
    who = "nobody won"
    if winner is not None:
        mine = replay.HasField("my_seat") and replay.my_seat == winner.seat
        who = "you won" if mine else f"{winner.display_name or 'Seat ' + str(winner.seat + 1)} won"
    return f"Replay · {replay.ruleset} · {who} · {len(replay.seats)} seats"


def hands_title(replay: player_pb2.GetReplayResponse) -> str:
    if replay.hands_shown:
        return "Every hand"
    return "Hands hidden: you did not sit at this table"


def hand_lines(step: Step, style: Style) -> list[str]:
    """One line per seat: whose turn, the name, the cards grouped by suit (or how
    many, where the replay hides them)."""
    view = step.view
    lines = []
    playing = view.phase in PLAYING_PHASES
    for seat, hand in zip(view.seats, step.hands, strict=True):
        marker = "▶ " if playing and seat.seat == view.current_seat else "  "
        name = seat.display_name or f"Seat {seat.seat + 1}"
        name = name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1] + "…"
        if hand is None:
            cards = style.dim(plural(seat.card_count, "card"))
        elif not hand:
            cards = style.dim("no card")
        else:
            cards = "  ".join(style.cards(g) for g in group_hand(c.code for c in hand))
        lines.append(f"{marker}{name:<{NAME_WIDTH}} {cards}")
    return lines


def position_text(step: Step, total: int, shuffles: str) -> str:
    """`Round 2 · turn 14 · step 87/186 · every shuffle verifies`."""
    view = step.view
    where = f"Round {view.round} · turn {view.turn}" if view.turn else f"Round {view.round}"
    if view.phase == table_pb2.PHASE_GAME_OVER:
        where = "Game over"
    return f"{where} · step {step.number}/{total} · {shuffles}"


def keys_text(style: Style) -> str:
    return "  ".join(f"{style.bold(key)} {what}" for key, what in KEYS)


def told(steps: Sequence[Step], at: int, count: int = SENTENCES) -> list[str]:
    """The sentences of the last ``count`` steps up to step index ``at`` that say
    something, oldest first (the step's own last, if it says anything)."""
    shown: list[str] = []
    for step in reversed(steps[: at + 1]):
        if step.sentence:
            shown.append(step.sentence)
        if len(shown) == count:
            break
    return shown[::-1]


def turn_starts(steps: Sequence[Step]) -> list[int]:
    """Indexes of the steps where a turn begins (a deal begins a round's first)."""
    return [i for i, s in enumerate(steps) if s.event.HasField("turn_started")]


def round_starts(steps: Sequence[Step]) -> dict[int, int]:
    """Round number → index of the step that dealt it."""
    return {s.event.dealt.round: i for i, s in enumerate(steps) if s.event.HasField("dealt")}
