"""Tables as stateless actors over PostgreSQL.

Any replica can serve any table; what a replica keeps of a table between calls
(`ParsedStates`) only saves work, and correctness never depends on it. `Tables`
is what the service holds: creating a table (here), a player's move (`moves`:
by compare-and-set, or under the table's row lock), the sweeper's timeouts and
bot turns (`sweeper`), and reading a table, all over what they share (`store`).
A call ends in a `Refusal` or what it `Committed` (`outcomes`); the SQL is in
`statements`.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence

import asyncpg
import grpc

from services.common.db import Connection
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import eventlog, statements
from .moves import TableMoves
from .outcomes import Committed, refusal_of
from .rules import serial
from .rules.actions import SYSTEM
from .rules.engine import apply
from .rules.errors import RuleError
from .rules.levels import BotLevel
from .rules.ruleset import TableOptions, effective_options
from .rules.state import new_game
from .seating import SeatPlayer
from .store import timestamp, turn_deadline
from .sweeper import TableSweeper


class Tables(TableMoves, TableSweeper):
    """The tables this replica serves: `create`, `act`, `load` and `seats`, and the
    sweeper's `due` and `sweep_once`."""

    async def _clock(self, con: Connection, table_id: uuid.UUID) -> asyncpg.Record:
        """The database's clock, and the table's version and last seq if it exists."""
        row = await self._clocked(con, statements.CLOCK, table_id)
        assert row is not None  # one row, always
        return row

    async def create(
        self,
        ruleset_name: str,
        options: TableOptions,
        players: Sequence[SeatPlayer],
        *,
        deck_order: Sequence[int] | None = None,
        table_id: uuid.UUID | None = None,
        bot_level: BotLevel = BotLevel.NORMAL,
    ) -> Committed:
        """Make a table and deal its first round; its bot seats play at ``bot_level``."""
        try:
            ruleset = self._rulesets(ruleset_name)
        except KeyError as error:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT, ServiceReason.RULESET_UNKNOWN, str(error.args[0])
            ) from None
        if not ruleset.min_players <= len(players) <= ruleset.max_players:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.SEATS_INVALID,
                f"A {ruleset.name} table seats {ruleset.min_players} to"
                f" {ruleset.max_players} players.",
            )
        if len({p.player_id for p in players}) != len(players):
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.SEATS_INVALID,
                "A player can only take one seat.",
            )
        try:
            options = effective_options(ruleset, options)
        except ValueError as error:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT, ServiceReason.OPTIONS_INVALID, str(error)
            ) from None
        if deck_order and not self._allow_test_decks:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                ServiceReason.TEST_DECK_REFUSED,
                "This server does not accept an explicit deck order.",
            )
        table_id = table_id or uuid.uuid4()
        players = [dataclasses.replace(p, bot_level=bot_level) if p.is_bot else p for p in players]
        bots = [seat for seat, p in enumerate(players) if p.is_bot]
        state = new_game(ruleset, len(players), options)
        async with self._pool.acquire() as con:
            # The insert finds out whether the table exists: the clock is read
            # first only when this replica has not seen it lately.
            now_ms = self._db_clock.now_ms()
            clock = None
            if now_ms is None:
                clock = await self._clock(con, table_id)
                now_ms = int(clock["now_ms"])
            if clock is None or clock["version"] is None:
                try:
                    state, events = apply(
                        state, SYSTEM, self._deal(state, deck_order or None), now_ms
                    )
                except RuleError as error:
                    raise refusal_of(error) from None
                seqs = list(range(1, len(events) + 1))
                data = serial.dumps(state)
                self._parsed.keep(table_id, data, state)
                # One statement: the table, its seats and its first events.
                created = await self._clocked(
                    con,
                    statements.CREATE,
                    table_id,
                    ruleset.name,
                    json.dumps(options_json(options)),
                    data,
                    turn_deadline(state, bots, now_ms, self._bot_pace),
                    seqs[-1],
                    bots,
                    [p.player_id for p in players],
                    [p.display_name for p in players],
                    [p.is_bot for p in players],
                    seqs,
                    [eventlog.kind_of(e) for e in events],
                    [eventlog.encode(e) for e in events],
                    timestamp(now_ms),
                    bot_level.value,
                )
                assert created is not None  # one row, always
                if created["made"]:
                    self._parsed.committed(table_id, state, 1, seqs[-1])
                    self._parsed.seat(table_id, players, bots)
                    committed = Committed(
                        table_id,
                        1,
                        seqs[-1],
                        state,
                        None,
                        now_ms,
                        tuple(zip(seqs, events, strict=True)),
                        tuple(players),
                    )
                    self._published(committed)
                    return committed
            # Made before: a retried create (the caller chose the id, or sent the same
            # request id), answered as the first time if it asks for the same table.
            made = await con.fetchrow(statements.MADE, table_id)
            seated = await self.seats(con, table_id)
            if (
                made is None
                or made["ruleset"] != ruleset.name
                or json.loads(made["options"]) != json.loads(json.dumps(options_json(options)))
                or [seated[s] for s in sorted(seated)] != list(players)
            ):
                raise Refusal(
                    grpc.StatusCode.ALREADY_EXISTS,
                    ServiceReason.TABLE_EXISTS,
                    "A different table already has this id.",
                )
            return Committed(table_id, 1, made["first_seq"] or 0, state, None, 0, ())


def options_json(options: TableOptions) -> dict[str, int]:
    """The effective options, as the matchmaker keys its queues by them."""
    return dataclasses.asdict(options)
