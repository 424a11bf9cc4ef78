"""Cards: one integer id per physical card, and the `7S` / `TS` / `JK` notation.

With ``decks`` packs of 52 and ``jokers`` jokers, natural card ids are
``copy * 52 + suit * 13 + (rank - 1)`` for ``copy`` in ``range(decks)``; the
jokers follow, from ``52 * decks`` up. Two copies of 7S are interchangeable in
play but keep their own ids, so the engine can check that every physical card
is in exactly one place after every action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

RANKS = "A23456789TJQK"
SUITS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
JOKER = 0
"""Rank value of a joker: natural ranks run from 1 (ace) to 13 (king)."""
ACE_HIGH = 14
"""Rank an ace takes at the top of a run (Q K A)."""
NO_SUIT = -1


class CardParseError(ValueError):
    """Raised for text that is not a card in the `7S` notation."""


def rank_name(rank: int) -> str:
    return RANKS[(rank - 1) % 13]


@dataclass(frozen=True, slots=True)
class Deck:
    """The physical cards of one rule set: ``decks`` packs plus ``jokers`` jokers."""

    decks: int
    jokers: int
    rank: tuple[int, ...] = field(init=False, repr=False, compare=False)
    suit: tuple[int, ...] = field(init=False, repr=False, compare=False)
    codes: tuple[str, ...] = field(init=False, repr=False, compare=False)
    """The notation of every card id, in id order (views print every card they show)."""

    def __post_init__(self) -> None:
        naturals = 52 * self.decks
        ranks = [(i % 13) + 1 for i in range(naturals)] + [JOKER] * self.jokers
        suits = [(i // 13) % 4 for i in range(naturals)] + [NO_SUIT] * self.jokers
        object.__setattr__(self, "rank", tuple(ranks))
        object.__setattr__(self, "suit", tuple(suits))
        object.__setattr__(
            self, "codes", tuple(card_label(r, s) for r, s in zip(ranks, suits, strict=True))
        )

    @property
    def size(self) -> int:
        return 52 * self.decks + self.jokers

    def ids(self) -> range:
        return range(self.size)

    def is_joker(self, card: int) -> bool:
        return card >= 52 * self.decks

    def is_card(self, card: int) -> bool:
        return 0 <= card < self.size

    def code(self, card: int) -> str:
        """The notation of a card id: ``7S``, ``TS``, ``JK``."""
        if not self.is_card(card):
            raise CardParseError(f"{card} is not a card of this deck")
        return self.codes[card]

    def ids_of(self, code: str) -> tuple[int, ...]:
        """Every card id that prints as ``code`` (two for a natural with two decks)."""
        rank, suit = parse_code(code)
        if rank == JOKER:
            return tuple(range(52 * self.decks, self.size))
        base = suit * 13 + rank - 1
        return tuple(base + 52 * copy for copy in range(self.decks))


def parse_code(text: str) -> tuple[int, int]:
    """Parse ``7S``, ``10s``, ``th``, ``JK`` into ``(rank, suit)``; a joker is ``(0, -1)``.

    Suit symbols (♠♥♦♣) are accepted too, so text copied from the terminal parses.
    """
    code = text.strip().upper()
    if code in ("JK", "JOKER", "*"):
        return JOKER, NO_SUIT
    if len(code) < 2:
        raise CardParseError(f"'{text}' is not a card: write it like 7S, TS, QH or JK")
    rank_text, suit_text = code[:-1], code[-1]
    if suit_text in SUIT_SYMBOLS:
        suit_text = SUITS[SUIT_SYMBOLS.index(suit_text)]
    if rank_text == "10":
        rank_text = "T"
    if len(rank_text) != 1 or rank_text not in RANKS or suit_text not in SUITS:
        raise CardParseError(f"'{text}' is not a card: write it like 7S, TS, QH or JK")
    return RANKS.index(rank_text) + 1, SUITS.index(suit_text)


def card_label(rank: int, suit: int) -> str:
    """Notation for a rank and suit, e.g. the card a joker stands for."""
    if rank == JOKER:
        return "JK"
    return rank_name(rank) + SUITS[suit]


@cache
def deck_of(decks: int, jokers: int) -> Deck:
    return Deck(decks, jokers)
