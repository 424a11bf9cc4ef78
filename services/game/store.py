"""The tables in PostgreSQL (`TableStore`): their rows, and the one protocol by
which every change of a table after its creation is committed.

The commit protocol. A player's move (`moves`), a bot's move and a timeout
(`sweeper`) are all committed the same way:

1. From a version. A change starts from the table at a committed version
   (`Known`: its state, version and last seq, with its seats). A move takes it
   from what this replica last committed or read (`ParsedStates`), on this
   replica's estimate of the database's clock (`DbClock`), with no round trip;
   failing that, from a read (`read`). The sweeper takes it from its claim of a
   due turn (FOR UPDATE SKIP LOCKED: each due turn fires once across replicas).
2. Judged in memory: the engine's move, then what the table does by itself
   (`House.followed`).
3. Written only over that version (`commit`): one statement (`statements.WRITE`)
   writes the new state and version only if the table is still at the version
   and last seq judged from, logs the events, keeps the request's answer under
   its id and frees the seats that left. A game's end also updates the players'
   ratings, in the same transaction (the statement's update holds the table's
   row until the commit).
4. Or judged again: when the table moved meanwhile nothing is written, and a
   move reads the table and is judged again; a retried request finds its kept
   answer instead.
5. Then known and announced (`committed`): the new state is this replica's at
   its version, and its events go to this replica's watchers at once and to the
   other replicas by a coalesced NOTIFY (`Fanout.published`), before the
   connection goes back to the pool.

Presence (`presence`) logs its events under the table's row lock: they take a
seq but no version, which is why a write checks the last seq too.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import asyncpg
import grpc

from services.common import metrics
from services.common.db import Connection, Pool, Statement
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import eventlog, results, statements
from .dbclock import DbClock
from .eventlog import LoggedEvent
from .fanout import Fanout
from .pacing import BotPace
from .parsed import ParsedStates
from .records import Committed, KeptRequest, Known, Made, Read, RequestAnswer, SeatPlayer
from .rules import serial
from .rules.events import EndReason, Event, GameEnded, PlayerEliminated, PlayerLeft, RoundEnded
from .rules.levels import BotLevel
from .rules.state import GameState, Phase


def turn_deadline(
    state: GameState, bots: Sequence[int] = (), now_ms: int = 0, pace: BotPace | None = None
) -> datetime | None:
    """The `turn_deadline` column: when the table clock is next due (the turn's
    timeout, a claim window's end), or sooner when a bot is to play (`pace`)."""
    due = state.due_ms()
    if not due:
        return None
    if pace is not None and state.current in bots and state.claim_card < 0:
        due = min(due, pace.due_ms(state, bots, now_ms))
    return datetime.fromtimestamp(due / 1000, UTC)


def timestamp(now_ms: int) -> datetime:
    return datetime.fromtimestamp(now_ms / 1000, UTC)


def _gone(events: Sequence[tuple[int, Event]]) -> list[int]:
    """The seats these events took out of the game: their players leave the table."""
    return [e.seat for _, e in events if isinstance(e, PlayerLeft | PlayerEliminated)]


def _count_endings(committed: Committed) -> None:
    """Metrics of what a committed transaction ended."""
    state = committed.state
    ruleset = state.ruleset.name
    capped = state.turn >= state.options.turn_cap
    for _, event in committed.events:
        if isinstance(event, RoundEnded) and (
            event.reason == EndReason.TURN_CAP or (event.reason == EndReason.BLOCKED and capped)
        ):
            metrics.TURN_CAP_ENDINGS.labels(ruleset).inc()
        elif isinstance(event, GameEnded):
            metrics.GAMES_FINISHED.labels(ruleset, event.reason.value).inc()


def _seated(row: asyncpg.Record) -> tuple[SeatPlayer, ...]:
    """The seats `statements.READ` found, in seat order."""
    if row["players"] is None:
        return ()
    level = BotLevel(row["bot_level"])
    return tuple(
        SeatPlayer(player_id=p, display_name=n, is_bot=b, bot_level=level if b else None)
        for p, n, b in zip(row["players"], row["names"], row["bots"], strict=True)
    )


class TableStore:
    """The tables' rows, and what this replica keeps of them: the states it
    committed or read lately (`ParsedStates`) and its estimate of the database's
    clock (`DbClock`). Correctness never depends on either."""

    def __init__(self, pool: Pool, fanout: Fanout, *, bot_pace: BotPace | None = None) -> None:
        self.pool = pool
        self._fanout = fanout
        self._bot_pace = bot_pace or BotPace()
        self._parsed = ParsedStates()
        self._db_clock = DbClock()

    # --- what this replica knows --------------------------------------------------

    def known(self, table_id: uuid.UUID) -> Known | None:
        """The table at the version this replica last committed or read, if kept."""
        return self._parsed.known(table_id)

    def now_ms(self) -> int | None:
        """The database's clock as this replica estimates it; None without a recent sample."""
        return self._db_clock.now_ms()

    def state_of(self, table_id: uuid.UUID, row: asyncpg.Record) -> GameState:
        """The state a row read from the table holds (at the row's version)."""
        return self._parsed.loads(
            table_id,
            row["state"],
            version=row["version"],
            last_seq=row["last_seq"],
            connected=tuple(row["connected_seats"]),
        )

    async def _clocked(
        self, con: Connection, statement: Statement, **values: object
    ) -> asyncpg.Record | None:
        """`fetchrow` of a statement whose row reads the database's clock (`now_ms`):
        each such row is a sample for this replica's estimate of that clock."""
        sent = time.monotonic()
        row = await con.fetchrow(statement.sql, *statement.args(**values))
        if row is not None:
            self._db_clock.saw(row["now_ms"], sent, time.monotonic())
        return row

    # --- reading ---------------------------------------------------------------------

    async def clock(self, con: Connection, table_id: uuid.UUID) -> tuple[int, bool]:
        """The database's clock, and whether the table exists."""
        row = await self._clocked(con, statements.CLOCK, table_id=table_id)
        assert row is not None  # one row, always
        return int(row["now_ms"]), row["version"] is not None

    async def read(
        self, con: Connection, *, table_id: uuid.UUID, player_id: str, request_id: str
    ) -> Read | None:
        """The table as it is now, with its seats, and what ``request_id`` already
        holds for ``player_id``; None if there is no such table."""
        row = await self._clocked(
            con, statements.READ, table_id=table_id, player_id=player_id, request_id=request_id
        )
        if row is None:
            return None
        request = None
        if row["response"] is not None or row["error"] is not None:
            request = KeptRequest(
                answer=None if row["response"] is None else bytes(row["response"]),
                refusal=None if row["error"] is None else Refusal.from_json(row["error"]),
                digest=row["digest"],
            )
        seats = _seated(row)
        state = self.state_of(table_id, row)
        self._parsed.seat(table_id, seats, row["bot_seats"])
        table = Known(
            table_id=table_id,
            state=state,
            version=row["version"],
            last_seq=row["last_seq"],
            seats=seats,
            bot_seats=tuple(row["bot_seats"]),
            connected=tuple(row["connected_seats"]),
        )
        return Read(
            table=table, now_ms=row["now_ms"], active=row["status"] == "active", request=request
        )

    async def load(
        self, table_id: uuid.UUID, player_id: str
    ) -> tuple[Committed, dict[int, SeatPlayer]]:
        """The table as it is now, for ``player_id`` (a spectator when not seated):
        one statement when this replica keeps the table's state at its version
        (only what a move may change without a version is read then: the last
        seq and who is connected), else its state and seats are read."""
        kept = self._parsed.known(table_id)
        async with self.pool.acquire() as con:
            row = await self._clocked(
                con,
                statements.LOAD,
                table_id=table_id,
                kept_version=kept.version if kept is not None and kept.seats else -1,
            )
            if row is None:
                raise Refusal(
                    grpc.StatusCode.NOT_FOUND,
                    ServiceReason.TABLE_NOT_FOUND,
                    "There is no such table.",
                )
            if row["state"] is None and kept is not None and kept.seats:
                state, seats = kept.state, dict(enumerate(kept.seats))
            else:
                seats = await self.seats(con, table_id)
                state = self.state_of(table_id, row)
        seated = tuple(seats[s] for s in sorted(seats))
        seat = next((s for s, p in seats.items() if p.player_id == player_id), None)
        self._parsed.seat(table_id, seated, row["bot_seats"])
        return Committed(
            table_id=table_id,
            version=row["version"],
            last_seq=row["last_seq"],
            state=state,
            seat=seat,
            now_ms=row["now_ms"],
            events=(),
            seats=seated,
            bot_seats=tuple(row["bot_seats"]),
            connected=tuple(row["connected_seats"]),
        ), seats

    async def seats(self, con: Connection | Pool, table_id: uuid.UUID) -> dict[int, SeatPlayer]:
        rows = await statements.SEATS.fetch(con, table_id=table_id)
        return {
            r["seat"]: SeatPlayer(
                player_id=r["player_id"],
                display_name=r["display_name"],
                is_bot=r["is_bot"],
                bot_level=BotLevel(r["bot_level"]) if r["is_bot"] else None,
            )
            for r in rows
        }

    async def made(self, con: Connection, table_id: uuid.UUID) -> Made | None:
        """What a create stored under ``table_id``, if anything."""
        row = await statements.MADE.fetchrow(con, table_id=table_id)
        if row is None:
            return None
        return Made(row["ruleset"], json.loads(row["options"]), row["first_seq"] or 0)

    # --- writing ---------------------------------------------------------------------

    async def create(
        self,
        con: Connection,
        table: Committed,
        *,
        ruleset: str,
        options: dict[str, int],
        bot_level: BotLevel,
    ) -> bool:
        """Insert a new table at version 1 (its seats, its first events), unless its
        id is taken; then it is known and announced. Whether it was made."""
        state, seats = table.state, table.seats
        data = serial.dumps(state)
        self._parsed.keep(table.table_id, data, state)
        row = await self._clocked(
            con,
            statements.CREATE,
            table_id=table.table_id,
            ruleset=ruleset,
            options=json.dumps(options),
            state=data,
            last_seq=table.last_seq,
            turn_deadline=turn_deadline(state, table.bot_seats, table.now_ms, self._bot_pace),
            bot_seats=list(table.bot_seats),
            bot_level=bot_level.value,
            player_ids=[p.player_id for p in seats],
            names=[p.display_name for p in seats],
            is_bot=[p.is_bot for p in seats],
            at=timestamp(table.now_ms),
            **_logged(table.events),
        )
        assert row is not None  # one row, always
        if not row["made"]:
            return False
        self.committed(table)
        return True

    async def commit(
        self, con: Connection, change: Committed, *, answer: RequestAnswer | None = None
    ) -> bool:
        """Write ``change`` (`Known.advanced`) only if the table is still at the
        version it was judged from: the commit protocol's one write. False when it
        is not, or the request was answered meanwhile: nothing was written.

        Outside a transaction the change is then known and announced (`committed`).
        Inside one (the sweeper's claim), that is the caller's to do once its
        transaction commits: only then does the database hold the change."""
        table_id, state = change.table_id, change.state
        over = state.phase == Phase.GAME_OVER
        own = not con.is_in_transaction()
        data = serial.dumps(state)
        if over:
            self._parsed.forget(table_id)  # no move will read it again
        else:
            # Kept before the commit: bytes that are never committed are never read back.
            self._parsed.keep(table_id, data, state)
        values = {
            "table_id": table_id,
            "state": data,
            "version": change.version,
            "last_seq": change.last_seq,
            "turn_deadline": turn_deadline(state, change.bot_seats, change.now_ms, self._bot_pace),
            "status": "finished" if over else "active",
            "at": timestamp(change.now_ms),
            "gone": _gone(change.events),
            "player_id": answer.player_id if answer else "",
            "request_id": answer.request_id if answer else "",
            "answer": answer.answer if answer else None,
            "digest": answer.digest if answer else None,
            **_logged(change.events),
        }
        try:
            if over:
                # The ratings change with the game's end, or not at all.
                async with con.transaction():
                    row = await self._clocked(con, statements.WRITE, **values)
                    if row is not None and row["moved"]:
                        await results.record(con, change.table_id, change.state)
            else:
                row = await self._clocked(con, statements.WRITE, **values)
        except asyncpg.UniqueViolationError:
            return False  # a retry of this very request was answered first
        assert row is not None  # one row, always
        if not row["moved"]:
            return False
        if own:
            self.committed(change)
        return True

    def committed(self, change: Committed) -> None:
        """``change`` is in the database: it is this replica's state of the table at
        its version, and its events are announced (this replica's watchers now, the
        others by NOTIFY). A commit that logged no event has nothing to announce."""
        table_id = change.table_id
        self._parsed.committed(
            table_id,
            change.state,
            version=change.version,
            last_seq=change.last_seq,
            connected=change.connected,
        )
        if change.seats:
            self._parsed.seat(table_id, change.seats, change.bot_seats)
        _count_endings(change)
        if not change.events:
            return
        at = timestamp(change.now_ms)
        self._fanout.published(
            table_id, [LoggedEvent(seq, change.version, event, at) for seq, event in change.events]
        )

    async def remember_refusal(
        self,
        con: Connection,
        *,
        table_id: uuid.UUID,
        player_id: str,
        request_id: str,
        refusal: Refusal,
        digest: bytes | None,
    ) -> bool:
        """Keep a move's refusal under its request id, so a retry gets it again;
        False if the id already holds an answer (a retry's, made meanwhile)."""
        kept = await statements.REMEMBER_REFUSAL.fetchval(
            con,
            table_id=table_id,
            player_id=player_id,
            request_id=request_id,
            error=refusal.to_json(),
            digest=digest,
        )
        return bool(kept)


def _logged(events: Sequence[tuple[int, Event]]) -> dict[str, object]:
    """The events' columns of `table_events`, as the statements take them."""
    return {
        "seqs": [seq for seq, _ in events],
        "kinds": [eventlog.kind_of(e) for _, e in events],
        "payloads": [eventlog.encode(e) for _, e in events],
    }
