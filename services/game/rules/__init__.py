"""The rules engine: pure functions over plain values, no I/O, no clock, no OS RNG.

The public face, for client developers and tools: the terminal client and the
matchmaker import this package only, never its modules (the import contracts in
pyproject.toml hold them to it). A client reads a seat's view back into a state
(`seen_state`) to ask the engine the moves open now (`move_kinds`), a bot's move
or why a laying would be refused (`laying_refusal`).

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
    Claim,
    Deal,
    Discard,
    DrawStock,
    EndTable,
    LayOff,
    Leave,
    Meld,
    MeldSpec,
    Reposer,
    Resume,
    SwapJoker,
    TakeDiscard,
    Timeout,
)
from .bots import GreedyBot
from .cards import JOKER, NO_SUIT, RANKS, SUITS, CardParseError, Deck, parse_code
from .engine import apply
from .errors import Reason, RuleError
from .fairness import verify_deck
from .finder import Found, find_melds
from .guards import swap_refusal
from .legal import discardable, legal_actions, move_kinds
from .levels import BotLevel
from .melds import (
    MeldKind,
    Shape,
    Side,
    TableMeld,
    check_meld,
    complete_group,
    describe_joker,
    fits,
    joker_targets,
    replace_joker,
)
from .opening import laying_refusal
from .ruleset import (
    CONTRACT_GROUP,
    CONTRACT_RUN,
    LARGE_TABLE,
    MAX_CONTRACT_DEALS,
    MAX_ELIMINATION_CAP,
    MAX_ROUNDS,
    MAX_TARGET_SCORE,
    PRESETS,
    QUICK_MATCH_SIZES,
    Contract,
    JokerDiscard,
    Reshuffle,
    Ruleset,
    Scoring,
    TableOptions,
    TakenDiscard,
    effective_options,
    preset,
)
from .scoring import card_penalty, hand_penalty, meld_points
from .seen import UNKNOWN, SeenTable, seen_state, table_meld
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
    "CONTRACT_GROUP",
    "CONTRACT_RUN",
    "JOKER",
    "LARGE_TABLE",
    "MAX_CONTRACT_DEALS",
    "MAX_ELIMINATION_CAP",
    "MAX_ROUNDS",
    "MAX_TARGET_SCORE",
    "NO_SUIT",
    "PRESETS",
    "QUICK_MATCH_SIZES",
    "RANKS",
    "SUITS",
    "SYSTEM",
    "UNKNOWN",
    "Abandon",
    "Action",
    "BotLevel",
    "CardParseError",
    "Claim",
    "Contract",
    "Deal",
    "Deck",
    "Discard",
    "DrawStock",
    "EndTable",
    "Found",
    "GameState",
    "GreedyBot",
    "JokerDiscard",
    "LayOff",
    "Leave",
    "Meld",
    "MeldKind",
    "MeldSpec",
    "Phase",
    "Reason",
    "Reposer",
    "Reshuffle",
    "Resume",
    "RuleError",
    "Ruleset",
    "Scoring",
    "SeatStatus",
    "SeatView",
    "SeenTable",
    "Shape",
    "Side",
    "SwapJoker",
    "TableMeld",
    "TableOptions",
    "TakeDiscard",
    "TakenDiscard",
    "Timeout",
    "apply",
    "card_penalty",
    "check_meld",
    "complete_group",
    "describe_joker",
    "discardable",
    "effective_options",
    "find_melds",
    "fits",
    "hand_penalty",
    "joker_targets",
    "laying_refusal",
    "legal_actions",
    "meld_points",
    "move_kinds",
    "new_game",
    "parse_card",
    "parse_cards",
    "parse_code",
    "preset",
    "replace_joker",
    "seen_state",
    "swap_refusal",
    "table_meld",
    "validate_meld",
    "verify_deck",
    "view",
]
