"""The state of one table: changed only by `engine.apply`, seen only through `view`."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from .melds import TableMeld
from .ruleset import Contract, Ruleset, TableOptions, effective_options


class Phase(IntEnum):
    DEAL = 0
    """Waiting for the chance step that deals a round."""
    DRAW = 1
    PLAY = 2
    """The current seat has drawn: meld, lay off, swap, then discard."""
    GAME_OVER = 3


class SeatStatus(IntEnum):
    PLAYING = 0
    LEFT = 1
    ELIMINATED = 2


@dataclass(frozen=True, slots=True)
class RoundResult:
    round_no: int
    winner: int
    reason: str
    penalties: tuple[int, ...]
    """Points each seat scored in the round."""
    totals: tuple[int, ...]
    """Each seat's game total after the round (before any buy-back it led to)."""
    doubled: bool = False
    """The scores were doubled (`rami51` rami d'un coup, `classic` rami sec)."""
    hands: tuple[tuple[int, ...], ...] = ()
    """Each seat's cards left when the round ended, shown to all as they are laid
    face up to be counted; empty for a round kept before they were."""


@dataclass(slots=True)
class GameState:
    ruleset: Ruleset
    options: TableOptions
    seats: int
    hands: list[list[int]]
    stock: list[int]
    """Top of the stock is the last element."""
    discard: list[int]
    """Top of the discard pile is the last element."""
    melds: list[TableMeld]
    opened: list[bool]
    totals: list[int]
    status: list[SeatStatus]
    phase: Phase = Phase.DEAL
    round_no: int = 0
    dealer: int = 0
    current: int = 0
    turn: int = 0
    """Turns begun this round, timed-out turns included."""
    deadline_ms: int = 0
    taken_discard: int = -1
    """The card taken from the discard pile this turn, or -1."""
    drawn: int = -1
    """The card drawn this turn (either pile), or -1."""
    next_meld_id: int = 1
    reshuffles: int = 0
    seed: int = 0
    """Drives this round's reshuffles; comes with the deal."""
    winner: int = -1
    """The game's winner once the phase is GAME_OVER."""
    results: list[RoundResult] = field(default_factory=list)
    began_opened: bool = False
    """Whether the current seat had opened when its turn began (rami d'un coup)."""
    moved: bool = False
    """The current seat has melded, laid off or swapped this turn."""
    taken_used: bool = False
    """The card taken from the discard pile this turn went into a meld."""
    reposed: bool = False
    """The current seat put the taken discard back this turn (`rami51`)."""
    claim_card: int = -1
    """`contract`: the discard others may claim now, or -1 when no window is open."""
    claim_deadline_ms: int = 0
    claimants: list[int] = field(default_factory=list)
    top_discarder: int = -1
    """The seat that discarded the top card of the discard pile, or -1 when no seat
    did since that card came on top (turned up, uncovered by a take or a claim,
    put back): `contract`'s discarder may not claim its own card back."""
    buy_backs: list[int] = field(default_factory=list)
    """`classic`: buy-backs each seat has used."""
    deal_order: tuple[int, ...] = ()
    """The round's deck as dealt: secret until the round ends (DeckRevealed)."""
    deal_salt: str = ""
    end_reason: str = ""
    """Once the phase is GAME_OVER: why the game ended (an `EndReason` value)."""
    end_note: str = ""
    """Once the phase is GAME_OVER: why, in words for the players (`EndTable`)."""
    resumed_ms: int = 0
    """When the table clock last started again after a stop (`Resume`): each stop
    gives a turn its time back once."""

    def copy(self) -> GameState:
        """An independent copy (every list is new; melds and results are immutable).

        `apply` makes one per action, so this fills the slots directly instead of
        going through the generated ``__init__`` (about 30% cheaper)."""
        new = object.__new__(GameState)
        new.ruleset = self.ruleset
        new.options = self.options
        new.seats = self.seats
        new.hands = [h[:] for h in self.hands]
        new.stock = self.stock[:]
        new.discard = self.discard[:]
        new.melds = self.melds[:]
        new.opened = self.opened[:]
        new.totals = self.totals[:]
        new.status = self.status[:]
        new.phase = self.phase
        new.round_no = self.round_no
        new.dealer = self.dealer
        new.current = self.current
        new.turn = self.turn
        new.deadline_ms = self.deadline_ms
        new.taken_discard = self.taken_discard
        new.drawn = self.drawn
        new.next_meld_id = self.next_meld_id
        new.reshuffles = self.reshuffles
        new.seed = self.seed
        new.winner = self.winner
        new.results = self.results[:]
        new.began_opened = self.began_opened
        new.moved = self.moved
        new.taken_used = self.taken_used
        new.reposed = self.reposed
        new.claim_card = self.claim_card
        new.claim_deadline_ms = self.claim_deadline_ms
        new.claimants = self.claimants[:]
        new.top_discarder = self.top_discarder
        new.buy_backs = self.buy_backs[:]
        new.deal_order = self.deal_order
        new.deal_salt = self.deal_salt
        new.end_reason = self.end_reason
        new.end_note = self.end_note
        new.resumed_ms = self.resumed_ms
        return new

    def playing(self) -> list[int]:
        return [s for s in range(self.seats) if self.status[s] == SeatStatus.PLAYING]

    def next_playing(self, seat: int) -> int:
        for step in range(1, self.seats + 1):
            candidate = (seat + step) % self.seats
            if self.status[candidate] == SeatStatus.PLAYING:
                return candidate
        return seat

    def contract(self, round_no: int = 0) -> Contract | None:
        """The contract of deal ``round_no`` (default: the current one), if any."""
        contracts = self.options.contracts or self.ruleset.contracts
        if not contracts:
            return None
        return contracts[(max(round_no or self.round_no, 1) - 1) % len(contracts)]

    def due_ms(self) -> int:
        """When the table clock next has something to do (0: nothing)."""
        if self.phase not in (Phase.DRAW, Phase.PLAY):
            return 0
        if self.claim_card >= 0:
            return min(self.deadline_ms, self.claim_deadline_ms)
        return self.deadline_ms

    def meld(self, meld_id: int) -> int:
        """Index of the table meld with this id, or -1."""
        for i, meld in enumerate(self.melds):
            if meld.id == meld_id:
                return i
        return -1


def new_game(ruleset: Ruleset, seats: int, options: TableOptions | None = None) -> GameState:
    """A table waiting for its first deal. Seat 0 plays first (the dealer is the last seat)."""
    if not ruleset.min_players <= seats <= ruleset.max_players:
        raise ValueError(
            f"a {ruleset.name} table has {ruleset.min_players} to {ruleset.max_players} seats"
        )
    opts = effective_options(ruleset, options or TableOptions())
    return GameState(
        ruleset=ruleset.for_seats(seats),
        options=opts,
        seats=seats,
        hands=[[] for _ in range(seats)],
        stock=[],
        discard=[],
        melds=[],
        opened=[False] * seats,
        totals=[0] * seats,
        status=[SeatStatus.PLAYING] * seats,
        dealer=seats - 1,
        buy_backs=[0] * seats,
    )
