"""Table states this replica read or wrote lately, kept parsed.

Parsing a state's bytes is a good share of what an action costs, and the next
action on a table usually reads back the very bytes this replica wrote. The
cache is keyed by table and checked against the bytes themselves, so a state
another replica wrote since is parsed anew: correctness never depends on it.

A kept state is shared: nothing may change it in place (`apply` works on a copy).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict

from .rules import serial
from .rules.state import GameState

STATES_KEPT = 4096
"""Tables whose state is kept: more than one replica's busy tables, a few MB."""


class ParsedStates:
    def __init__(self, most: int = STATES_KEPT) -> None:
        self._most = most
        self._kept: OrderedDict[uuid.UUID, tuple[bytes, GameState]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def loads(self, table_id: uuid.UUID, data: bytes) -> GameState:
        """The state these bytes hold: parsed, unless kept already."""
        kept = self._kept.get(table_id)
        if kept is not None and kept[0] == data:
            self._kept.move_to_end(table_id)
            return kept[1]
        state = serial.loads(data)
        self.keep(table_id, data, state)
        return state

    def keep(self, table_id: uuid.UUID, data: bytes, state: GameState) -> None:
        """Remember that ``data`` holds ``state`` (which nothing will change)."""
        self._kept[table_id] = (data, state)
        self._kept.move_to_end(table_id)
        if len(self._kept) > self._most:
            self._kept.popitem(last=False)
