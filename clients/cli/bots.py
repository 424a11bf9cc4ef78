"""Bot players that use the public API like any app: sign in, queue, play.

Each bot has its own login. It follows its table's Watch stream, and when its
turn begins it rebuilds an engine state from its own view (`viewstate`) and
lets the engine's GreedyBot choose every move of the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal
from services.game.rules import (
    Action,
    Discard,
    DrawStock,
    GreedyBot,
    Reason,
    card_penalty,
    discardable,
)

from . import matchmaking, waiting
from .connection import Connection
from .identity import MemoryIdentity
from .moves import action_request
from .render import my_turn
from .viewstate import state_from_view

EXPECTED = (Reason.NOT_YOUR_TURN, Reason.GAME_OVER, Reason.SEAT_LEFT, ServiceReason.CONFLICT)
"""Refusals a bot can meet without anyone being wrong: its turn timed out first."""
MAX_ERRORS_KEPT = 20


@dataclass
class Stats:
    """What all the bots of one run did, for the progress line and the summary."""

    started: float = field(default_factory=time.monotonic)
    games: set[str] = field(default_factory=set)
    tables: set[str] = field(default_factory=set)
    actions: int = 0
    latencies: list[float] = field(default_factory=list)
    stale: int = 0
    rate_limited: int = 0
    """Calls a server turned away for their rate, waited out and made again."""
    errors: int = 0
    messages: list[str] = field(default_factory=list)

    def error(self, text: str) -> None:
        self.errors += 1
        if len(self.messages) < MAX_ERRORS_KEPT:
            self.messages.append(text)

    @property
    def in_play(self) -> int:
        return len(self.tables - self.games)


class Pacer:
    """Spreads actions evenly at `rate` per second across all bots (0: no limit)."""

    def __init__(self, rate: float) -> None:
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        slot = max(now, self._next)
        self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


class BotPlayer:
    """One bot: queues, plays the table it gets to the end, and again."""

    def __init__(
        self,
        server: str,
        name: str,
        choice: matchmaking.QueueChoice,
        stats: Stats,
        *,
        pacer: Pacer | None = None,
        channels: dict[str, grpc.aio.Channel] | None = None,
        say: Callable[[str], None] = lambda _text: None,
        game: str = "",
        tls: bool = False,
    ) -> None:
        """`game` and `tls` as for `Connection`."""
        self.identity = MemoryIdentity(f"bot-{uuid.uuid4()}")
        self.conn = Connection(
            server,
            self.identity.device_id(),
            name,
            channels=channels,
            game=game,
            tls=tls,
            on_rate_limited=self._rate_limited,
        )
        self.choice = choice
        self.stats = stats
        self.pacer = pacer or Pacer(0)
        self.say = say
        self.bot = GreedyBot()
        self.table_id = ""

    def _rate_limited(self) -> None:
        self.stats.rate_limited += 1

    async def run(self, games: int | None = None) -> None:
        """Play `games` games (None: until cancelled)."""
        await self.conn.login()
        played = 0
        try:
            while games is None or played < games:
                match = await waiting.queue(self.conn, self.identity, self.choice, self.say)
                await matchmaking.open_table(self.conn, self.identity, match, self.say)
                self.table_id = match.table_id
                self.stats.tables.add(match.table_id)
                await self.play_table(match.table_id)
                self.stats.games.add(match.table_id)
                self.table_id = ""
                played += 1
        except Refusal as refused:
            self.stats.error(f"{self.conn.name}: {refused}")

    async def leave(self) -> None:
        """Resign from an unfinished table (the end of a load run), then sign out."""
        if self.table_id:
            with contextlib.suppress(Refusal, TimeoutError):
                await asyncio.wait_for(
                    self.conn.act("Leave", game_pb2.LeaveRequest(table_id=self.table_id)), 5
                )
        await self.conn.close()

    async def play_table(self, table_id: str) -> None:
        view = await self.conn.view(table_id)
        await self.maybe_claim(view)  # a window opened before the stream began
        await self.play_turn(view)
        current = view.current_seat
        async for item in self.conn.watch(table_id, view.last_seq):
            if isinstance(item, table_pb2.TableView):
                current = item.current_seat
                await self.play_turn(item)
            elif item.kind in (
                table_pb2.EVENT_KIND_TURN_STARTED,
                table_pb2.EVENT_KIND_TURN_RESUMED,  # a turn cut short by an outage
            ):
                current = item.seat
                if item.seat == view.my_seat:
                    await self.play_turn(await self.conn.view(table_id))
            elif item.kind == table_pb2.EVENT_KIND_CLAIM_WINDOW_OPENED and current != view.my_seat:
                await self.maybe_claim(await self.conn.view(table_id))
            elif item.kind == table_pb2.EVENT_KIND_GAME_ENDED:
                return

    async def maybe_claim(self, view: table_pb2.TableView) -> None:
        """ "Puis-je ?": claim the passed-over discard if the greedy bot wants it."""
        if not view.HasField("claim_window") or not self.bot.claims(
            state_from_view(view), view.my_seat
        ):
            return
        try:
            await self.conn.act(
                "Claim",
                game_pb2.ClaimRequest(table_id=view.table_id, card_id=view.claim_window.card.id),
            )
        except Refusal as refused:
            # The window may close (a discard, the clock) or move on to another
            # discard before the claim lands.
            lost_race = (
                Reason.CLAIM_NOT_ALLOWED,
                Reason.CLAIM_CARD_CHANGED,
                Reason.CLAIM_WINDOW_CLOSED,
            )
            if refused.reason not in lost_race:
                self.stats.error(f"{self.conn.name}: Claim refused: {refused}")
            return
        self.stats.actions += 1

    async def play_turn(self, view: table_pb2.TableView) -> None:
        """Every move of the turn, as the greedy bot chooses them from this seat's view."""
        fallback = False
        while my_turn(view):
            state = state_from_view(view)
            action = self.bot.move(state, view.my_seat)
            if fallback:
                action = _safe_move(view)
            if action is None:
                return  # nothing to do: the turn timer passes the turn
            request = action_request(view.table_id, view.version, action)
            await self.pacer.wait()
            started = time.monotonic()
            try:
                reply = await self.conn.act(request.method, request.message)
            except Refusal as refused:
                if refused.reason in EXPECTED or refused.code == grpc.StatusCode.ABORTED:
                    self.stats.stale += 1
                else:
                    self.stats.error(f"{self.conn.name}: {request.method} refused: {refused}")
                if fallback:
                    return
                fallback = True
                view = await self.conn.view(view.table_id)
                continue
            self.stats.latencies.append(time.monotonic() - started)
            self.stats.actions += 1
            view = reply.view


def _safe_move(view: table_pb2.TableView) -> Action | None:
    """After a refused move: the plainest legal one, so a table never waits on a bot."""
    state = state_from_view(view)
    if view.phase == table_pb2.PHASE_DRAW:
        return DrawStock()
    pool = discardable(state, state.hands[view.my_seat])
    if not pool:
        return None
    return Discard(max(pool, key=lambda c: card_penalty(c, state.ruleset)))
