"""Table states this replica read or wrote lately, kept parsed.

Parsing a state's bytes is a good share of what an action costs, and the next
action on a table usually reads back the very bytes this replica wrote. The
cache is keyed by table and checked against the bytes themselves, so a state
another replica wrote since is parsed anew: correctness never depends on it.

A kept state may also be known as the table's state at a version (`Known`):
only bytes the database holds are marked so, read back or after their commit.
A version is written once (`TableStore.commit` writes it only over the one
before), so the state at a version never changes: a move judged from a known
state commits only if the table is still at that version, and is judged again
from a read otherwise. Who sits where never changes at a table, so its seats
are kept beside it.

A kept state is shared: nothing may change it in place (`apply` works on a copy).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from .records import Known, SeatPlayer
from .rules import serial
from .rules.state import GameState

STATES_KEPT = 4096
"""Tables whose state is kept: more than one replica's busy tables. A parsed
mid-game state of a 4-seat table holds about 4.5 KB, so up to ~18 MB. A
finished table's is dropped at once: every kept object lengthens Python's full
collections, which every call in flight waits for."""


@dataclass(slots=True, kw_only=True)
class _Kept:
    data: bytes
    state: GameState
    version: int | None = None
    last_seq: int = 0
    seats: tuple[SeatPlayer, ...] | None = None
    bot_seats: tuple[int, ...] = ()
    connected: tuple[int, ...] = ()


class ParsedStates:
    """The states of the tables this replica served lately, parsed, each known at
    its version once the database holds it."""

    def __init__(self, most: int = STATES_KEPT) -> None:
        self._most = most
        self._kept: OrderedDict[uuid.UUID, _Kept] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def loads(
        self,
        table_id: uuid.UUID,
        data: bytes,
        *,
        version: int | None = None,
        last_seq: int = 0,
        connected: tuple[int, ...] = (),
    ) -> GameState:
        """The state these bytes hold: parsed, unless kept already. ``version`` is
        given only for bytes read from the database (the table's at that version,
        with its last seq and the seats told connected then)."""
        kept = self._kept.get(table_id)
        if kept is not None and kept.data == data:
            self._kept.move_to_end(table_id)
            if version is not None:
                kept.version, kept.last_seq, kept.connected = version, last_seq, connected
            return kept.state
        state = serial.loads(data)
        self.keep(table_id, data, state, version=version, last_seq=last_seq, connected=connected)
        return state

    def keep(
        self,
        table_id: uuid.UUID,
        data: bytes,
        state: GameState,
        *,
        version: int | None = None,
        last_seq: int = 0,
        connected: tuple[int, ...] = (),
    ) -> None:
        """Remember that ``data`` holds ``state`` (which nothing will change); at
        ``version`` only once the database holds it."""
        kept = self._kept.get(table_id)
        if kept is None:
            self._kept[table_id] = _Kept(
                data=data, state=state, version=version, last_seq=last_seq, connected=connected
            )
        else:
            kept.data, kept.state, kept.version, kept.last_seq = data, state, version, last_seq
            kept.connected = connected
            self._kept.move_to_end(table_id)
        if len(self._kept) > self._most:
            self._kept.popitem(last=False)

    def forget(self, table_id: uuid.UUID) -> None:
        """The table's game is over: no move will read it again."""
        self._kept.pop(table_id, None)

    def committed(
        self,
        table_id: uuid.UUID,
        state: GameState,
        *,
        version: int,
        last_seq: int,
        connected: tuple[int, ...] = (),
    ) -> None:
        """``state``, kept before its commit, is now the table's at ``version``."""
        kept = self._kept.get(table_id)
        if kept is not None and kept.state is state:
            kept.version, kept.last_seq, kept.connected = version, last_seq, connected

    def seat(
        self, table_id: uuid.UUID, seats: Sequence[SeatPlayer], bot_seats: Sequence[int]
    ) -> None:
        """Who sits where at a kept table (this never changes)."""
        kept = self._kept.get(table_id)
        if kept is not None and kept.seats is None:
            kept.seats, kept.bot_seats = tuple(seats), tuple(bot_seats)

    def known(self, table_id: uuid.UUID) -> Known | None:
        """The table's state at a committed version, if kept with its seats."""
        kept = self._kept.get(table_id)
        if kept is None or kept.version is None or kept.seats is None:
            return None
        self._kept.move_to_end(table_id)
        return Known(
            table_id=table_id,
            state=kept.state,
            version=kept.version,
            last_seq=kept.last_seq,
            seats=kept.seats,
            bot_seats=kept.bot_seats,
            connected=kept.connected,
        )
