"""An operator ends a table (`TableAdminService.EndTable`): the engine's
`EndTable`, applied by the table itself (``SYSTEM``) under the table's row lock
and written as the sweeper writes a timeout (`TableStore._write`): one
transaction for the state, its events and the table's status, then announced
to every watcher, on this replica and the others, as any move is.

A replica that knew the table's state before judges no move from it any more:
its compare-and-set finds another version, reads the table, and the engine
answers GAME_OVER."""

from __future__ import annotations

import uuid

import grpc

from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import statements
from .outcomes import Committed, refusal_of
from .rules.actions import SYSTEM, EndTable
from .rules.engine import apply
from .rules.errors import RuleError
from .store import count_endings
from .tables import Tables


async def end_table(tables: Tables, table_id: uuid.UUID, note: str) -> Committed:
    """End the table's game, nobody winning, with ``note`` to its players; what was
    committed. TABLE_NOT_FOUND, or GAME_OVER for a game that is over already."""
    # The store's own steps, as `TableSweeper.sweep_once` takes them: a system
    # action has no entry point of its own yet.
    async with tables._pool.acquire() as con:
        async with con.transaction():
            row = await con.fetchrow(statements.LOCK, table_id)
            if row is None:
                raise Refusal(
                    grpc.StatusCode.NOT_FOUND,
                    ServiceReason.TABLE_NOT_FOUND,
                    "There is no such table.",
                )
            try:
                state, events = apply(
                    tables._read(table_id, row), SYSTEM, EndTable(note), row["now_ms"]
                )
            except RuleError as error:
                raise refusal_of(error) from None
            committed = await tables._write(con, table_id, row, state, events, None)
        # Announced before the connection goes back, as a move is.
        tables._published(committed)
    count_endings(committed)
    return committed
