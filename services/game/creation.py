"""Making a table (`TableCreation.create`): its rules and seats checked, its first
round dealt, and the table, its seats and its first events inserted in one
statement. A retried create (the caller chose the id, or sent the same request
id) is answered as the first time if it asks for the same table."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Sequence

import grpc

from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .autoplay import House
from .outcomes import refusal_of
from .records import Committed, SeatPlayer
from .rules.actions import SYSTEM
from .rules.engine import apply
from .rules.errors import RuleError
from .rules.levels import BotLevel
from .rules.ruleset import Ruleset, TableOptions, effective_options
from .rules.state import new_game
from .store import TableStore


def options_json(options: TableOptions) -> dict[str, int]:
    """The effective options, as the matchmaker keys its queues by them."""
    return dataclasses.asdict(options)


class TableCreation:
    """New tables, made through the store."""

    def __init__(
        self,
        store: TableStore,
        house: House,
        *,
        rulesets: Callable[[str], Ruleset],
        allow_test_decks: bool = False,
    ) -> None:
        self._store = store
        self._house = house
        self._rulesets = rulesets
        self._allow_test_decks = allow_test_decks

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
        ruleset, options = self._checked(ruleset_name, options, players)
        if deck_order and not self._allow_test_decks:
            raise Refusal(
                grpc.StatusCode.PERMISSION_DENIED,
                ServiceReason.TEST_DECK_REFUSED,
                "This server does not accept an explicit deck order.",
            )
        table_id = table_id or uuid.uuid4()
        seats = tuple(
            dataclasses.replace(p, bot_level=bot_level) if p.is_bot else p for p in players
        )
        bots = tuple(seat for seat, p in enumerate(seats) if p.is_bot)
        state = new_game(ruleset, len(seats), options)
        async with self._store.pool.acquire() as con:
            # The insert finds out whether the table exists: the clock is read
            # first only when this replica has not seen it lately.
            now_ms = self._store.now_ms()
            exists = False
            if now_ms is None:
                now_ms, exists = await self._store.clock(con, table_id)
            if not exists:
                try:
                    state, events = apply(
                        state, SYSTEM, self._house.deal(state, deck_order or None), now_ms
                    )
                except RuleError as error:
                    raise refusal_of(error) from None
                table = Committed(
                    table_id=table_id,
                    version=1,
                    last_seq=len(events),
                    state=state,
                    seat=None,
                    now_ms=now_ms,
                    events=tuple(enumerate(events, 1)),
                    seats=seats,
                    bot_seats=bots,
                )
                made = await self._store.create(
                    con,
                    table,
                    ruleset=ruleset.name,
                    options=options_json(options),
                    bot_level=bot_level,
                )
                if made:
                    return table
            # Made before: a retried create, answered as the first time if it asks
            # for the same table.
            before = await self._store.made(con, table_id)
            seated = await self._store.seats(con, table_id)
        if (
            before is None
            or before.ruleset != ruleset.name
            or before.options != json.loads(json.dumps(options_json(options)))
            or [seated[s] for s in sorted(seated)] != list(seats)
        ):
            raise Refusal(
                grpc.StatusCode.ALREADY_EXISTS,
                ServiceReason.TABLE_EXISTS,
                "A different table already has this id.",
            )
        return Committed(
            table_id=table_id,
            version=1,
            last_seq=before.first_seq,
            state=state,
            seat=None,
            now_ms=0,
            events=(),
        )

    def _checked(
        self, ruleset_name: str, options: TableOptions, players: Sequence[SeatPlayer]
    ) -> tuple[Ruleset, TableOptions]:
        """The ruleset asked for and the options in effect, if the table can be made."""
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
            return ruleset, effective_options(ruleset, options)
        except ValueError as error:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT, ServiceReason.OPTIONS_INVALID, str(error)
            ) from None
