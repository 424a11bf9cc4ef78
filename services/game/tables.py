"""The table layer of one replica (`Tables`), its parts composed, each in the
module named for it:

- `store`: the tables' rows, and the one commit protocol every change of a table
  goes through (`TableStore`);
- `creation`: making a table (`TableCreation`);
- `moves`: a player's move (`TableMoves`);
- `sweeper`: the due turns, bots' moves and timeouts (`TableSweeper`);
- `clockstop`: the turns' clock, stopped while nobody can reach the service
  (`ClockStops`).

They share the store and the house (`autoplay.House`: the deals, and what a
table does by itself after a move)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from services.common.db import Pool

from .autoplay import House
from .clockstop import BEAT_S, CLOCK_STOP_S, ClockStops
from .creation import TableCreation
from .fanout import Fanout
from .moves import TableMoves
from .pacing import BotPace
from .rules.ruleset import Ruleset
from .store import TableStore
from .sweeper import TableSweeper


@dataclass(frozen=True, slots=True)
class Tables:
    """The tables this replica serves."""

    store: TableStore
    creation: TableCreation
    moves: TableMoves
    sweeper: TableSweeper
    clock: ClockStops

    @classmethod
    def open(
        cls,
        pool: Pool,
        fanout: Fanout,
        *,
        dsn: str,
        rulesets: Callable[[str], Ruleset],
        allow_test_decks: bool = False,
        bot_pace: BotPace | None = None,
        clock_stop_s: float = CLOCK_STOP_S,
        beat_s: float = BEAT_S,
        rng: random.Random | None = None,
    ) -> Tables:
        """The parts over one pool; ``dsn`` for the clock's own connection."""
        pace = bot_pace or BotPace()
        store = TableStore(pool, fanout, bot_pace=pace)
        house = House(rng)
        return cls(
            store=store,
            creation=TableCreation(
                store, house, rulesets=rulesets, allow_test_decks=allow_test_decks
            ),
            moves=TableMoves(store, house),
            sweeper=TableSweeper(store, house, bot_pace=pace, clock_stop_s=clock_stop_s),
            clock=ClockStops(pool, dsn=dsn, clock_stop_s=clock_stop_s, beat_s=beat_s),
        )
