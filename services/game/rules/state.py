"""The state of one table: changed only by `engine.apply`, seen only through `view`."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from .melds import Meld
from .ruleset import Ruleset, TableOptions


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
    melds: list[Meld]
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

    def copy(self) -> GameState:
        return GameState(
            self.ruleset,
            self.options,
            self.seats,
            [list(h) for h in self.hands],
            list(self.stock),
            list(self.discard),
            list(self.melds),
            list(self.opened),
            list(self.totals),
            list(self.status),
            self.phase,
            self.round_no,
            self.dealer,
            self.current,
            self.turn,
            self.deadline_ms,
            self.taken_discard,
            self.drawn,
            self.next_meld_id,
            self.reshuffles,
            self.seed,
            self.winner,
            list(self.results),
        )

    def playing(self) -> list[int]:
        return [s for s in range(self.seats) if self.status[s] == SeatStatus.PLAYING]

    def next_playing(self, seat: int) -> int:
        for step in range(1, self.seats + 1):
            candidate = (seat + step) % self.seats
            if self.status[candidate] == SeatStatus.PLAYING:
                return candidate
        return seat

    def meld(self, meld_id: int) -> int:
        """Index of the table meld with this id, or -1."""
        for i, meld in enumerate(self.melds):
            if meld.id == meld_id:
                return i
        return -1


def new_game(ruleset: Ruleset, seats: int, options: TableOptions | None = None) -> GameState:
    """A table waiting for its first deal. Seat 0 plays first (the dealer is the last seat)."""
    if not 2 <= seats <= 6:
        raise ValueError("a table has 2 to 6 seats")
    opts = options or TableOptions()
    opts.validate()
    return GameState(
        ruleset=ruleset,
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
    )
