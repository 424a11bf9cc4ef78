"""The rules engine: pure functions over plain values, no I/O, no clock, no OS RNG.

The public face for client developers and tools:

>>> from services.game.rules import parse_card, preset, validate_meld, hand_penalty
>>> cafe = preset("cafe")
>>> hand_penalty([parse_card(c, cafe) for c in "KS QH JC AD".split()], cafe)
41
"""

from __future__ import annotations

from collections.abc import Sequence

from .actions import (
    SYSTEM,
    Abandon,
    Action,
    Deal,
    Discard,
    DrawStock,
    LayOff,
    Leave,
    Meld,
    MeldSpec,
    Resume,
    SwapJoker,
    TakeDiscard,
    Timeout,
)
from .cards import CardParseError, Deck, parse_code
from .engine import apply
from .errors import Reason, RuleError
from .finder import Found, find_melds
from .legal import legal_actions
from .melds import Shape, Side, check_meld
from .ruleset import PRESETS, Ruleset, TableOptions, preset
from .scoring import hand_penalty
from .state import GameState, Phase, SeatStatus, new_game
from .view import SeatView, view


def parse_card(code: str, ruleset: Ruleset, *, copy: int = 0) -> int:
    """The id of a card written ``7S``/``TS``/``JK``; ``copy`` picks among identical cards."""
    ids = ruleset.deck.ids_of(code)
    if not 0 <= copy < len(ids):
        raise CardParseError(f"there is no copy {copy} of {code} in this deck")
    return ids[copy]


def parse_cards(text: str | Sequence[str], ruleset: Ruleset) -> list[int]:
    """Distinct ids for several codes: ``"7S 7S JK"`` gives both 7S and one joker."""
    codes = text.split() if isinstance(text, str) else list(text)
    taken: list[int] = []
    for code in codes:
        free = [i for i in ruleset.deck.ids_of(code) if i not in taken]
        if not free:
            raise CardParseError(f"this deck has no more {code.upper()}")
        taken.append(free[0])
    return taken


def validate_meld(cards: Sequence[int], ruleset: Ruleset) -> Shape:
    """The meld these cards make, or `RuleError` saying why they make none."""
    deck = ruleset.deck
    for card in cards:
        if not deck.is_card(card):
            raise RuleError(Reason.CARD_UNKNOWN, f"There is no card {card} in this game.")
    if len(set(cards)) != len(cards):
        raise RuleError(Reason.CARD_DUPLICATED, "The same card is named twice.")
    return check_meld(cards, ruleset)


__all__ = [
    "PRESETS",
    "SYSTEM",
    "Abandon",
    "Action",
    "CardParseError",
    "Deal",
    "Deck",
    "Discard",
    "DrawStock",
    "Found",
    "GameState",
    "LayOff",
    "Leave",
    "Meld",
    "MeldSpec",
    "Phase",
    "Reason",
    "Resume",
    "RuleError",
    "Ruleset",
    "SeatStatus",
    "SeatView",
    "Shape",
    "Side",
    "SwapJoker",
    "TableOptions",
    "TakeDiscard",
    "Timeout",
    "apply",
    "find_melds",
    "hand_penalty",
    "legal_actions",
    "new_game",
    "parse_card",
    "parse_cards",
    "parse_code",
    "preset",
    "validate_meld",
    "view",
]
