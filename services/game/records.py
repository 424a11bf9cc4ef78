"""The records the table layer hands around: who sits at a table (`SeatPlayer`),
a table at a committed version (`Known`: what a change is judged from), what
one commit left (`Committed`: what a call on a table is answered from), and
what the store reads and keeps for a move (`Read`, `KeptRequest`,
`RequestAnswer`) or a create (`Made`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from services.common.wire.refusals import Refusal

from .rules.events import Event
from .rules.levels import BotLevel
from .rules.state import GameState


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    """Who sits in a seat: set when the table is made, never changed after."""

    player_id: str
    display_name: str = ""
    is_bot: bool = False
    bot_level: BotLevel | None = None
    """A bot seat's level (the table's: every bot at a table plays at one level)."""


def bot_level(seats: Iterable[SeatPlayer]) -> BotLevel:
    """The level the table's bots play at (strong, as every bot did before levels,
    where none is known)."""
    return next((p.bot_level for p in seats if p.bot_level is not None), BotLevel.STRONG)


@dataclass(frozen=True, slots=True, kw_only=True)
class Known:
    """A table's state at a committed version, with its seats: what a change is
    judged from (the replica's own last commit or read, a read, or a claim)."""

    table_id: uuid.UUID
    state: GameState
    version: int
    last_seq: int
    seats: tuple[SeatPlayer, ...]
    """Who sits where (index = seat); () where the read did not ask (the sweeper)."""
    bot_seats: tuple[int, ...]
    connected: tuple[int, ...] = ()
    """The seats told connected as of ``last_seq``: presence takes seqs, never a
    version, so a change judged from this commits only at this very last seq."""

    def seat_of(self, player_id: str) -> int | None:
        return next((s for s, p in enumerate(self.seats) if p.player_id == player_id), None)

    def advanced(
        self, *, state: GameState, events: Sequence[Event], seat: int | None, now_ms: int
    ) -> Committed:
        """What committing ``events`` (which led to ``state``) on this version
        leaves: the next version, the events at the next seqs."""
        return Committed(
            table_id=self.table_id,
            version=self.version + 1,
            last_seq=self.last_seq + len(events),
            state=state,
            seat=seat,
            now_ms=now_ms,
            events=tuple(enumerate(events, self.last_seq + 1)),
            seats=self.seats,
            bot_seats=self.bot_seats,
            connected=self.connected,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed:
    """What one committed transaction left: the new state, seen by ``seat``."""

    table_id: uuid.UUID
    version: int
    last_seq: int
    state: GameState
    seat: int | None
    now_ms: int
    events: tuple[tuple[int, Event], ...]
    """The events it logged, each with its seq."""
    seats: tuple[SeatPlayer, ...] = ()
    """Who sits where (index = seat), when the transaction read it."""
    bot_seats: tuple[int, ...] = ()
    connected: tuple[int, ...] = ()
    """The seats told connected as of ``last_seq`` (`presence`); bots aside."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KeptRequest:
    """What a request id already holds: the answer its move committed with, or the
    refusal it got, and the digest of what it asked."""

    answer: bytes | None
    refusal: Refusal | None
    digest: bytes | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Read:
    """A move's read of its table (`TableStore.read`)."""

    table: Known
    now_ms: int
    """The database's clock at the read."""
    active: bool
    """Whether the game is on (a finished table cannot move on)."""
    request: KeptRequest | None
    """What the request id already holds, if anything."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestAnswer:
    """A request's answer, kept with its id in the change's own commit: a retry
    finds it exactly when the change was made."""

    player_id: str
    request_id: str
    answer: bytes
    digest: bytes | None


@dataclass(frozen=True, slots=True)
class Made:
    """What a create stored, to tell a retry of it from another table under its id."""

    ruleset: str
    options: dict[str, int]
    first_seq: int
