"""Card names as players type and read them.

Players type forgiving codes (`7s`, `10S`, `ts`, `7♠`, `jk`); the server wants
card ids. Two packs mean two cards can share a code, so names are turned into
ids by picking distinct cards from the player's own hand.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from typing import TextIO

from services.common.pb.rummy.v1 import cards_pb2
from services.game.rules import RANKS, SUITS, CardParseError, parse_code

SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
HAND_SUITS = "SHCD"
"""Hand order: black and red suits alternate, so neighbours are easy to tell apart."""
RED, MAGENTA, BOLD, DIM, RESET = "\x1b[31m", "\x1b[35m", "\x1b[1m", "\x1b[2m", "\x1b[0m"


class CardError(ValueError):
    """A card name that is not a card, or not one the player holds."""


def colour_wanted(stream: TextIO | None = None) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def symbols_wanted(stream: TextIO | None = None) -> bool:
    """Suit symbols (♠♥♦♣) where the terminal's encoding can show them, letters
    (S H D C) elsewhere; RUMMY_ASCII=1 asks for letters anyway."""
    if os.environ.get("RUMMY_ASCII", "").strip() not in ("", "0"):
        return False
    stream = stream or sys.stdout
    encoding = getattr(stream, "encoding", None) or "ascii"
    try:
        "".join(SYMBOL.values()).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def normalize(text: str) -> str:
    """The server's code for a typed card: `7s` -> `7S`, `10h` -> `TH`, `7♠` -> `7S`."""
    try:
        rank, suit = parse_code(text)
    except CardParseError:
        raise CardError(f"'{text}' is not a card: write it like 7S, 10H, QD or JK.") from None
    if rank == 0:
        return "JK"
    return RANKS[rank - 1] + SUITS[suit]


def plural(count: int, word: str, many: str = "") -> str:
    """`1 card`, `2 cards`, `0 cards`, `1 joker`; ``many`` for irregular plurals."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def is_joker(code: str) -> bool:
    return code == "JK"


def rank_key(code: str) -> int:
    """Sort key of a rank, ace low."""
    return RANKS.index(code[0]) if not is_joker(code) else 99


class Style:
    """Turns codes and text into what the terminal shows, in colour or not."""

    def __init__(self, colour: bool, *, symbols: bool = True) -> None:
        self.colour = colour
        self.symbols = symbols

    def uncoloured(self) -> Style:
        """The same cards without colour: for sentences such as a refusal's, which
        still show suits the way this terminal can (symbols or letters)."""
        return Style(False, symbols=self.symbols)

    def paint(self, text: str, code: str) -> str:
        return f"{code}{text}{RESET}" if self.colour else text

    def card(self, code: str) -> str:
        """`7♠`, `10♥`, `JK`: rank and suit symbol (or letter), red suits in red."""
        if is_joker(code):
            return self.paint("JK", MAGENTA + BOLD)
        rank = "10" if code[0] == "T" else code[0]
        text = rank + (SYMBOL[code[1]] if self.symbols else code[1])
        return self.paint(text, RED) if code[1] in "HD" else text

    def cards(self, codes: Iterable[str]) -> str:
        return " ".join(self.card(c) for c in codes)

    def bold(self, text: str) -> str:
        return self.paint(text, BOLD)

    def dim(self, text: str) -> str:
        return self.paint(text, DIM)


def group_hand(codes: Iterable[str]) -> list[list[str]]:
    """The hand sorted and grouped by suit (♠ ♥ ♣ ♦), ace low, jokers last."""
    groups: list[list[str]] = []
    codes = list(codes)
    for suit in HAND_SUITS:
        group = sorted((c for c in codes if not is_joker(c) and c[1] == suit), key=rank_key)
        if group:
            groups.append(group)
    jokers = [c for c in codes if is_joker(c)]
    if jokers:
        groups.append(jokers)
    return groups


def pick(
    hand: Sequence[cards_pb2.Card],
    codes: Sequence[str],
    *,
    avoid: Iterable[int] = (),
    style: Style | None = None,
) -> list[int]:
    """Distinct ids from `hand` for typed card names, preferring cards not in `avoid`.
    A card not in hand is named as ``style`` shows cards (uncoloured)."""
    shown = (style or Style(False)).uncoloured()
    taken: list[int] = []
    shy = set(avoid)
    for text in codes:
        code = normalize(text)
        free = [c.id for c in hand if c.code == code and c.id not in taken]
        if not free:
            have = sum(1 for c in hand if c.code == code)
            label = shown.card(code)
            if have:
                raise CardError(f"You have only {have} {label} in your hand.")
            raise CardError(f"You have no {label} in your hand.")
        free.sort(key=lambda i: i in shy)
        taken.append(free[0])
    return taken
