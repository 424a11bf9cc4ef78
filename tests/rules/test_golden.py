"""Golden playthrough: a fixed-seed game between two greedy bots, summarised as
text and pinned in ``golden/greedy_2p.txt``. Any change of behaviour (rules,
finder, bot, shuffle) shows up as a diff of that file.

After an intended change, regenerate it with ``RULES_GOLDEN_UPDATE=1 pytest
tests/rules/test_golden.py`` and review the diff like code.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from services.game.rules import Action, Deal, GameState, TableOptions
from services.game.rules.bots import GreedyBot
from services.game.rules.events import (
    BoughtBack,
    DeckRevealed,
    Discarded,
    Drew,
    Event,
    GameEnded,
    JokerSwapped,
    LaidOff,
    Melded,
    PlayerEliminated,
    PlayerLeft,
    Reshuffled,
    RoundDealt,
    RoundEnded,
    TurnBegan,
    TurnPassed,
)
from services.game.rules.simulate import play_game

from .helpers import CAFE, codes, sorted_codes

GOLDEN = Path(__file__).parent / "golden" / "greedy_2p.txt"
SEED = 20_240_603
"""Chosen because its three rounds include joker swaps, a reshuffle and passed turns."""


def _slash(values: tuple[int, ...]) -> str:
    return "/".join(str(v) for v in values)


def describe(event: Event) -> str | None:
    """One line for an event; None for events the summary leaves out."""
    match event:
        case RoundDealt():
            hands = " | ".join(f"s{s}: {sorted_codes(h)}" for s, h in enumerate(event.hands))
            return f"round {event.round_no} dealt by s{event.dealer}: {hands}"
        case TurnBegan():
            return None
        case Drew():
            verb = "takes" if event.from_discard else "draws"
            return f"s{event.seat} {verb} {codes([event.card])}"
        case Reshuffled():
            top = codes([event.discard_top])
            return f"reshuffle {event.count}: stock {event.stock_size}, top {top}"
        case Melded():
            laid = " ".join(f"m{m.id}[{codes(m.cards)}]" for m in event.melds)
            return f"s{event.seat} melds {laid}{' (opens)' if event.opened else ''}"
        case LaidOff():
            return (
                f"s{event.seat} lays off {codes(event.cards)} on m{event.meld.id}"
                f" -> [{codes(event.meld.cards)}]"
            )
        case JokerSwapped():
            swapped = codes([event.replacement])
            return f"s{event.seat} swaps {swapped} for the joker of m{event.meld.id}"
        case Discarded():
            verb = "auto-discards" if event.automatic else "discards"
            return f"s{event.seat} {verb} {codes([event.card])}"
        case TurnPassed():
            return f"s{event.seat} turn passes ({event.reason})"
        case RoundEnded():
            return (
                f"round {event.round_no} ends, {event.reason.value}: winner s{event.winner},"
                f" penalties {_slash(event.penalties)}, totals {_slash(event.totals)}"
            )
        case PlayerEliminated() | PlayerLeft():
            return f"s{event.seat} {type(event).__name__}"
        case BoughtBack():
            return f"s{event.seat} buys back in at {event.total} (buy-back {event.used})"
        case DeckRevealed():
            return f"round {event.round_no} deck revealed ({len(event.order)} cards)"
        case GameEnded():
            return (
                f"game ends, {event.reason.value}: winner s{event.winner},"
                f" totals {_slash(event.totals)}"
            )
    raise AssertionError(f"no summary for {event!r}")


def transcript() -> str:
    lines: list[str] = []

    def record(
        before: GameState, seat: int, action: Action, after: GameState, events: list[Event]
    ) -> None:
        turn = "t000" if isinstance(action, Deal) else f"t{before.turn:03d}"
        for event in events:
            line = describe(event)
            if line is not None:
                lines.append(f"{turn} {line}")

    play_game(
        CAFE,
        [GreedyBot(), GreedyBot()],
        random.Random(SEED),
        options=TableOptions(rounds=3),
        observe=record,
    )
    return "\n".join(lines) + "\n"


def test_golden_playthrough_two_greedy_bots() -> None:
    text = transcript()
    if os.environ.get("RULES_GOLDEN_UPDATE"):
        GOLDEN.write_text(text, encoding="utf-8")
        pytest.skip(f"regenerated {GOLDEN.name}")
    assert GOLDEN.exists(), "no golden file: run with RULES_GOLDEN_UPDATE=1"
    expected = GOLDEN.read_text(encoding="utf-8")
    assert text == expected, "behaviour changed: diff the transcript, regenerate if intended"


def test_golden_playthrough_is_deterministic_and_covers_the_turn() -> None:
    text = transcript()
    assert text == transcript()
    for word in (" melds ", " lays off ", " swaps ", "reshuffle", " turn passes ", "game ends"):
        assert word in text
