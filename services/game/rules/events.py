"""What an action caused, as small values a table streams to its seats.

Events carry everything for the acting seat; `visible_to` hides from any other
viewer what that viewer may not see (a card drawn from the stock, other hands).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from .melds import TableMeld

HIDDEN = -1
"""Stands in for a card the viewer may not see."""


class EndReason(StrEnum):
    WENT_OUT = "went_out"
    TURN_CAP = "turn_cap"
    BLOCKED = "blocked"
    TARGET_REACHED = "target_reached"
    ROUNDS_PLAYED = "rounds_played"
    LAST_STANDING = "last_standing"
    OTHERS_LEFT = "others_left"
    ENDED_BY_OPERATOR = "ended_by_operator"
    """The people who run the service ended the table (`EndTable`)."""


@dataclass(frozen=True, slots=True)
class Event:
    def visible_to(self, viewer: int | None) -> Event:
        """The event as ``viewer`` (a seat, or None for a spectator) may see it."""
        return self


@dataclass(frozen=True, slots=True)
class RoundDealt(Event):
    round_no: int
    dealer: int
    hands: tuple[tuple[int, ...], ...]
    discard_top: int
    stock_size: int
    commitment: str = ""
    """SHA-256 of the deck, seed and salt (see fairness.py), revealed at the end."""

    def visible_to(self, viewer: int | None) -> Event:
        hands = tuple(
            hand if seat == viewer else tuple(HIDDEN for _ in hand)
            for seat, hand in enumerate(self.hands)
        )
        return replace(self, hands=hands)


@dataclass(frozen=True, slots=True)
class TurnBegan(Event):
    seat: int
    turn: int
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class Drew(Event):
    seat: int
    card: int
    from_discard: bool
    stock_size: int

    def visible_to(self, viewer: int | None) -> Event:
        if self.from_discard or viewer == self.seat:
            return self
        return replace(self, card=HIDDEN)


@dataclass(frozen=True, slots=True)
class Reshuffled(Event):
    stock_size: int
    discard_top: int
    count: int = 0
    """Reshuffles so far this round, this one included (0: logged before it was kept)."""


@dataclass(frozen=True, slots=True)
class Melded(Event):
    seat: int
    melds: tuple[TableMeld, ...]
    opened: bool = False
    """This action was the seat's opening (its first laying of the round)."""
    opening_points: int = 0
    """What the opening counted towards the table's points threshold (`rami51`,
    `classic`), exempt or not; 0 for any other laying and where no threshold
    applies (`cafe`, `contract`)."""


@dataclass(frozen=True, slots=True)
class LaidOff(Event):
    seat: int
    cards: tuple[int, ...]
    meld: TableMeld
    """The meld after the lay-off."""


@dataclass(frozen=True, slots=True)
class JokerSwapped(Event):
    seat: int
    joker: int
    replacement: int
    meld: TableMeld
    """The meld after the swap; where the joker went follows as its own event."""
    second: int = -1
    """`classic`: the second card put in, when a brelan became a carré (-1: none)."""
    placed_in: TableMeld | None = None
    """Where the joker went: the new meld, or the meld it was laid off on (after the
    lay-off); None when it stayed in the hand."""


@dataclass(frozen=True, slots=True)
class Discarded(Event):
    seat: int
    card: int
    automatic: bool = False


@dataclass(frozen=True, slots=True)
class TurnResumed(Event):
    """The service is back after nobody could reach it: the turn in play has until
    ``deadline_ms`` (and an open claim window until ``claim_deadline_ms``)."""

    seat: int
    turn: int
    deadline_ms: int
    claim_deadline_ms: int
    """0 when no claim window is open."""
    stopped_ms: int
    """How long the table clock stood still."""


@dataclass(frozen=True, slots=True)
class TurnPassed(Event):
    seat: int
    reason: str
    """`timeout`; `no_move` when the seat could do nothing after its draw (its
    time ran out at once); `left` when the seat resigned during its turn."""


@dataclass(frozen=True, slots=True)
class PlayerConnection(Event):
    """The seat's player lost or got back their connection to the table. Not a
    move: the engine never makes one; the service logs it (at the table's version,
    unchanged) when it sees a seat's streams come and go."""

    seat: int
    connected: bool


@dataclass(frozen=True, slots=True)
class PlayerLeft(Event):
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerEliminated(Event):
    seat: int
    total: int


@dataclass(frozen=True, slots=True)
class BoughtBack(Event):
    """`classic`: the seat reached the cap and bought back in."""

    seat: int
    total: int
    """The total it restarts at: the highest among the players still in the game."""
    used: int
    """Buy-backs the seat has now used."""


@dataclass(frozen=True, slots=True)
class RoundEnded(Event):
    round_no: int
    winner: int
    reason: EndReason
    penalties: tuple[int, ...]
    """Points each seat scores this round (0 for the winner)."""
    totals: tuple[int, ...]
    doubled: bool = False
    """The scores were doubled: out in one go (`rami51` rami d'un coup, `classic` rami sec)."""
    hands: tuple[tuple[int, ...], ...] = ()
    """Each seat's cards left, in seat order. The round is over, so they are every
    viewer's to see (RULES.md section 6); empty in an event logged before they were kept."""


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    winner: int
    reason: EndReason
    totals: tuple[int, ...]
    note: str = ""
    """Why, in words for the players: what the operator wrote (`EndTable`)."""


@dataclass(frozen=True, slots=True)
class Reposed(Event):
    seat: int
    card: int


@dataclass(frozen=True, slots=True)
class ClaimWindowOpened(Event):
    card: int
    closes_ms: int


@dataclass(frozen=True, slots=True)
class ClaimWindowClosed(Event):
    """The window closed and nobody took the card: no seat claimed it, or it was
    no longer the top of the discard pile."""

    card: int


@dataclass(frozen=True, slots=True)
class ClaimMade(Event):
    seat: int


@dataclass(frozen=True, slots=True)
class Claimed(Event):
    seat: int
    card: int
    penalty: int
    """The extra card from the stock; only its taker sees it."""

    def visible_to(self, viewer: int | None) -> Event:
        return self if viewer == self.seat else replace(self, penalty=HIDDEN)


@dataclass(frozen=True, slots=True)
class CardAnnounced(Event):
    """ "Carte !": the seat holds one card."""

    seat: int


@dataclass(frozen=True, slots=True)
class DeckRevealed(Event):
    """The round is over: its deck, seed and salt, to check against the commitment."""

    round_no: int
    order: tuple[int, ...]
    seed: int
    salt: str
