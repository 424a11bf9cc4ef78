"""An operator ends a table (`TableAdminService.EndTable`): the engine's
`EndTable`, applied by the table itself (``SYSTEM``) and committed by the
protocol every change of a table goes through (`TableStore.commit`): judged
from the table as read, written only over that version, then announced to
every watcher, on this replica and the others, as any move is."""

from __future__ import annotations

import uuid

import grpc

from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .moves import CAS_ATTEMPTS
from .outcomes import refusal_of
from .records import Committed
from .rules.actions import SYSTEM, EndTable
from .rules.engine import apply
from .rules.errors import RuleError
from .tables import Tables


async def end_table(tables: Tables, table_id: uuid.UUID, note: str) -> Committed:
    """End the table's game, nobody winning, with ``note`` to its players; what was
    committed. TABLE_NOT_FOUND, or GAME_OVER for a game that is over already."""
    store = tables.store
    async with store.pool.acquire() as con:
        for _ in range(CAS_ATTEMPTS):
            read = await store.read(con, table_id=table_id, player_id="", request_id="")
            if read is None:
                raise Refusal(
                    grpc.StatusCode.NOT_FOUND,
                    ServiceReason.TABLE_NOT_FOUND,
                    "There is no such table.",
                )
            table = read.table
            try:
                state, events = apply(table.state, SYSTEM, EndTable(note), read.now_ms)
            except RuleError as error:
                raise refusal_of(error) from None
            change = table.advanced(state=state, events=events, seat=None, now_ms=read.now_ms)
            # Outside a transaction, a change written is known and announced at once.
            if await store.commit(con, change):
                return change
    raise Refusal(
        grpc.StatusCode.ABORTED,
        ServiceReason.CONFLICT,
        "The table kept changing: try again.",
    )
