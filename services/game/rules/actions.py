"""What a seat (or the table itself) can do. Every action is a small frozen value,
so a whole game is a list of actions and replays exactly."""

from __future__ import annotations

from dataclasses import dataclass

from .melds import MeldKind, Side

SYSTEM = -1
"""The seat that applies chance and clock actions (deal, timeout)."""


@dataclass(frozen=True, slots=True)
class MeldSpec:
    cards: tuple[int, ...]
    """For a run, from low to high (or high to low): the order fixes each joker's card."""
    joker_suits: tuple[tuple[int, int], ...] = ()
    """For a group: (joker id, suit) where the player names the suit a joker stands for."""
    kind: MeldKind | None = None
    """The shape the player means; the cards are then read only that way. None lets
    the engine read them: a group when the natural cards share a rank, else a run."""


@dataclass(frozen=True, slots=True)
class Deal:
    """The chance step: the shuffled deck and the seed that drives later reshuffles
    of this round. The caller draws both from its RNG. ``order[0]`` is the top card:
    it is dealt first, one card at a time from the seat left of the dealer; the card
    after the hands starts the discard pile, and the rest is the stock, in order."""

    order: tuple[int, ...]
    seed: int
    salt: bytes = b""
    """Secret until the round ends; makes the deck commitment unguessable."""


@dataclass(frozen=True, slots=True)
class DrawStock:
    pass


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    pass


@dataclass(frozen=True, slots=True)
class Meld:
    melds: tuple[MeldSpec, ...]


@dataclass(frozen=True, slots=True)
class LayOff:
    meld_id: int
    cards: tuple[int, ...]
    side: Side = Side.AUTO


@dataclass(frozen=True, slots=True)
class SwapJoker:
    """Put ``replacement`` (the card the joker stands for) in meld ``meld_id``, take
    ``joker``, and place it at once: in ``new_meld`` (which holds the joker) or by
    ``lay_off`` (whose cards hold the joker)."""

    meld_id: int
    joker: int
    replacement: int
    new_meld: MeldSpec | None = None
    lay_off: LayOff | None = None
    second: int = -1
    """`classic`: the second card that completes a brelan into a carré."""


@dataclass(frozen=True, slots=True)
class Discard:
    card: int


@dataclass(frozen=True, slots=True)
class Reposer:
    """`rami51`: put the card taken from the discard pile back, then draw from the stock."""


@dataclass(frozen=True, slots=True)
class Claim:
    """`contract` "Puis-je ?": ask for the discard another seat passed over."""

    card: int
    """The discard asked for, as the claimant saw it offered. Judged against the
    card on offer when the claim is applied: a claim for a card no longer offered
    is refused, never turned into a claim for another card."""


@dataclass(frozen=True, slots=True)
class Timeout:
    """Applied by the table clock once the turn's deadline has passed."""


@dataclass(frozen=True, slots=True)
class Resume:
    """Applied by the table clock when the service is back after nobody could
    reach it (the database, or every replica, was out) from ``stopped_ms`` to
    ``restarted_ms``: no move could be made then, so the turn in play gets back
    the time it had left when the clock stopped."""

    stopped_ms: int
    restarted_ms: int


@dataclass(frozen=True, slots=True)
class Leave:
    """The seat resigns: it plays no more turns and cannot win."""


@dataclass(frozen=True, slots=True)
class Abandon:
    """Applied by the table once every person at it has left or been eliminated
    and only bots still play: the game ends there, won by the best placed of
    them, rather than being played out for nobody."""


@dataclass(frozen=True, slots=True)
class EndTable:
    """Applied by the table when the people who run the service end it (a game
    that cannot go on, say): the game ends there, nobody winning, with their
    ``note`` to the players."""

    note: str


Action = (
    Deal
    | DrawStock
    | TakeDiscard
    | Meld
    | LayOff
    | SwapJoker
    | Discard
    | Reposer
    | Claim
    | Timeout
    | Resume
    | Leave
    | Abandon
    | EndTable
)
