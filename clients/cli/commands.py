"""The short commands typed at the table, parsed into values.

Parsing only checks the shape of a command and normalises card names; whether
the move is allowed is the server's call, and its sentence is what the player
sees when it is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cards import CardError, normalize

HELP = """\
Commands (card names are forgiving: 7S, 7s, 10H, th, 7♠, JK):
  d                 draw the top card of the stock
  t                 take the top card of the discard pile
  m 7S 8S 9S        lay down a meld; several at once: m 7S 8S 9S / QH QD QC
                    (for a run, the order of the cards says what a joker stands for)
  l 3 TS            lay off cards on table meld 3 (add 'low' or 'high' for a joker on a run)
  s 2 9H            swap the joker of meld 2 for your 9H, then say where the joker goes
                    (classic, a joker in a brelan: name both missing cards, s 2 QH QC)
  x QD              discard, which ends your turn
  r                 put back the discard you took (rami51: Reposer), then draw
  c                 claim the discard another player passed over (contract: Puis-je ?)
  h                 hint: the best melds in your hand
  v                 show the table again
  ?                 this help
  q                 leave the table (asks first); Ctrl-D quits and keeps your seat"""


class CommandError(ValueError):
    """A command that cannot be understood; the message says how to write it."""


@dataclass(frozen=True, slots=True)
class Draw:
    pass


@dataclass(frozen=True, slots=True)
class Take:
    pass


@dataclass(frozen=True, slots=True)
class PutBack:
    pass


@dataclass(frozen=True, slots=True)
class ClaimCommand:
    pass


@dataclass(frozen=True, slots=True)
class MeldCommand:
    melds: tuple[tuple[str, ...], ...]
    """Card codes of each meld, in the order typed."""


@dataclass(frozen=True, slots=True)
class LayOffCommand:
    meld: int
    cards: tuple[str, ...]
    side: str = ""
    """'', 'low' or 'high'."""


@dataclass(frozen=True, slots=True)
class SwapCommand:
    meld: int
    cards: tuple[str, ...]
    """The card the joker stands for; in `classic`, a brelan's two missing cards."""


@dataclass(frozen=True, slots=True)
class DiscardCommand:
    card: str


@dataclass(frozen=True, slots=True)
class Hint:
    pass


@dataclass(frozen=True, slots=True)
class Help:
    pass


@dataclass(frozen=True, slots=True)
class Show:
    pass


@dataclass(frozen=True, slots=True)
class Quit:
    pass


@dataclass(frozen=True, slots=True)
class Nothing:
    pass


Command = (
    Draw
    | Take
    | PutBack
    | ClaimCommand
    | MeldCommand
    | LayOffCommand
    | SwapCommand
    | DiscardCommand
    | Hint
    | Help
    | Show
    | Quit
    | Nothing
)

_SIMPLE: dict[str, Command] = {
    "d": Draw(),
    "draw": Draw(),
    "t": Take(),
    "take": Take(),
    "r": PutBack(),
    "reposer": PutBack(),
    "c": ClaimCommand(),
    "claim": ClaimCommand(),
    "h": Hint(),
    "hint": Hint(),
    "?": Help(),
    "help": Help(),
    "v": Show(),
    "view": Show(),
    "q": Quit(),
    "quit": Quit(),
    "leave": Quit(),
}
_VERBS = {
    "m": "meld",
    "meld": "meld",
    "l": "lay",
    "lay": "lay",
    "s": "swap",
    "swap": "swap",
    "x": "discard",
    "discard": "discard",
}
_SIDES = {"low": "low", "<": "low", "high": "high", ">": "high"}


def _cards(words: list[str]) -> tuple[str, ...]:
    try:
        return tuple(normalize(w) for w in words)
    except CardError as error:
        raise CommandError(str(error)) from None


def _meld_number(word: str, usage: str) -> int:
    text = word.lstrip("#[").rstrip("]")
    if not text.isdigit():
        raise CommandError(f"'{word}' is not a meld number. {usage}")
    return int(text)


def parse(line: str) -> Command:
    """One typed line as a command; `CommandError` says what is wrong with it."""
    text = line.strip()
    if not text:
        return Nothing()
    head, _, rest = text.partition(" ")
    head = head.lower()
    if head in _SIMPLE:
        if rest.strip():
            raise CommandError(f"'{head}' takes nothing after it: type {head} alone.")
        return _SIMPLE[head]
    verb = _VERBS.get(head)
    if verb is None:
        raise CommandError(f"Unknown command '{head}': type ? for the list.")
    words = rest.split()
    if verb == "meld":
        groups = [g.split() for g in re.split(r"[/,]", rest)]
        groups = [g for g in groups if g]
        if not groups:
            raise CommandError("Name the cards of the meld: m 7S 8S 9S")
        return MeldCommand(tuple(_cards(g) for g in groups))
    if verb == "lay":
        usage = "Write it like: l 3 TS"
        if len(words) < 2:
            raise CommandError(f"Name a meld number and the cards. {usage}")
        side = _SIDES.get(words[-1].lower(), "")
        if side:
            words = words[:-1]
        if len(words) < 2:
            raise CommandError(f"Name the cards to lay off. {usage}")
        return LayOffCommand(_meld_number(words[0], usage), _cards(words[1:]), side)
    if verb == "swap":
        usage = "Write it like: s 2 9H (or s 2 QH QC to complete a brelan)"
        if len(words) not in (2, 3):
            raise CommandError(
                f"Name a meld number and the card (or two) the joker stands for. {usage}"
            )
        return SwapCommand(_meld_number(words[0], usage), _cards(words[1:]))
    if len(words) != 1:
        raise CommandError("Name one card to discard: x QD")
    return DiscardCommand(_cards(words)[0])
