"""The service under load: greedy bots on many concurrent tables, each table
watched, through the public API of one game server."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import time
from collections import Counter
from dataclasses import dataclass, field

import grpc

from bench.common import channel
from bench.game.measure import Timings, Usage, Window, loop_lag, metered
from bench.game.players import Bot, send, service_metadata
from bench.game.servers import Child
from bench.game.settings import LONG_TIMER_MS, SEATS
from clients.cli.viewstate import state_from_view
from services.common.db import database_name
from services.common.heap import freeze_heap
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, table_pb2
from services.game.rules.bots import GreedyBot


@dataclass
class LoadStats:
    window: Window
    actions: Timings = field(init=False)
    watch: Timings = field(init=False)
    errors: Counter[str] = field(default_factory=Counter)
    games: int = 0
    tables: int = 0
    stalls: int = 0
    reads: int = 0
    usage: Usage | None = None

    def __post_init__(self) -> None:
        self.actions = Timings(self.window)
        self.watch = Timings(self.window)


class Tracker:
    """Pairs each action's response time with its events' arrival on the watchers."""

    def __init__(self, stats: LoadStats) -> None:
        self._stats = stats
        self._responded: dict[int, float] = {}
        self._arrived: dict[int, list[float]] = {}

    def responded(self, version: int, at: float) -> None:
        self._responded[version] = at
        for arrived in self._arrived.pop(version, ()):
            self._stats.watch.add(at, arrived)  # arrived first: a negative latency

    def arrived(self, version: int, at: float) -> None:
        sent = self._responded.get(version)
        if sent is None:
            self._arrived.setdefault(version, []).append(at)
        else:
            self._stats.watch.add(sent, at)


async def watch_table(
    stub: game_pb2_grpc.GameServiceAsyncStub, bot: Bot, table_id: str, tracker: Tracker
) -> None:
    call = stub.Watch(game_pb2.WatchRequest(table_id=table_id), metadata=bot.metadata)
    newest = 0
    with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
        async for reply in call:
            version = reply.event.version
            if version > newest:  # the first event of each action
                newest = version
                tracker.arrived(version, time.perf_counter())
    call.cancel()


def turn_view(last: table_pb2.TableView, mine: table_pb2.TableView) -> table_pb2.TableView:
    """The current seat's view, from the newest view of the table and its own hand.

    Between two of its turns nothing touches a seat's hand, so a client needs
    no GetTable when the turn comes round: the last reply shows the table.
    """
    if last.my_seat == mine.my_seat:
        return last
    view = table_pb2.TableView()
    view.CopyFrom(last)
    view.my_seat = mine.my_seat
    del view.hand[:]
    view.hand.extend(mine.hand)
    view.ClearField("taken_discard_id")
    return view


async def play_table(
    stub: game_pb2_grpc.GameServiceAsyncStub,
    stats: LoadStats,
    *,
    maker: tables_pb2_grpc.TableServiceAsyncStub,
    interval: float,
    watchers: int,
    background: set[asyncio.Task[None]],
) -> None:
    """Greedy bots play games on one table after another until the window ends.

    They sit as ordinary players (not `is_bot`, which the server would play
    itself) and play through the public API only."""
    end = stats.window.end
    bot_brain = GreedyBot()
    next_at = time.perf_counter() + random.uniform(0, interval)
    while time.perf_counter() < end:
        bots = [Bot.new() for _ in range(SEATS)]
        reply = await maker.CreateTable(
            tables_pb2.CreateTableRequest(
                ruleset="cafe",
                options=table_pb2.TableOptions(turn_timer_ms=LONG_TIMER_MS),
                players=[
                    tables_pb2.SeatedPlayer(player_id=b.player_id, display_name="bot") for b in bots
                ],
            ),
            metadata=service_metadata(),
        )
        table_id = reply.table_id
        stats.tables += 1
        tracker = Tracker(stats)
        for w in range(watchers):
            task = asyncio.create_task(watch_table(stub, bots[w % SEATS], table_id, tracker))
            background.add(task)
            task.add_done_callback(background.discard)
        views = {}
        for b in bots:
            view = (
                await stub.GetTable(
                    game_pb2.GetTableRequest(table_id=table_id), metadata=b.metadata
                )
            ).view
            views[view.my_seat] = view
        stats.reads += SEATS
        last = views[0]
        failures = 0
        while last.phase != table_pb2.PHASE_GAME_OVER and time.perf_counter() < end:
            seat = last.current_seat
            action = bot_brain.move(state_from_view(turn_view(last, views[seat])), seat)
            if action is None:
                stats.stalls += 1  # only the clock could move this table on
                break
            if interval:
                now = time.perf_counter()
                next_at = max(next_at + interval, now - interval)
                if next_at > now:
                    await asyncio.sleep(next_at - now)
            started = time.perf_counter()
            try:
                reply = await send(stub, bots[seat], table_id, action)
            except grpc.aio.AioRpcError as error:
                stats.errors[error.code().name] += 1
                failures += 1
                if failures > 3:
                    break
                last = (
                    await stub.GetTable(
                        game_pb2.GetTableRequest(table_id=table_id), metadata=bots[seat].metadata
                    )
                ).view
                views[seat] = last
                stats.reads += 1
                continue
            done = time.perf_counter()
            stats.actions.add(started, done)
            tracker.responded(reply.version, done)
            views[seat] = last = reply.view
        if last.phase == table_pb2.PHASE_GAME_OVER:
            stats.games += 1


async def service_load(
    server: Child, args: argparse.Namespace, rate: float | None, title: str
) -> LoadStats:
    # The bots' process freezes its heap as the servers do (services.common.heap):
    # its own full collections would otherwise stall every call it times.
    freeze_heap()
    stats = LoadStats(Window.after(2.0, args.seconds))
    interval = args.tables / rate if rate else 0.0
    chans = [channel(server.port, i) for i in range(4)]
    background: set[asyncio.Task[None]] = set()
    metering = asyncio.create_task(
        metered(stats.window, database_name(server.dsn), {"game server": server.pid})
    )
    lagging = asyncio.create_task(loop_lag(stats.window, server.metrics_port))
    try:
        stubs = [game_pb2_grpc.GameServiceStub(c) for c in chans]
        makers = [tables_pb2_grpc.TableServiceStub(c) for c in chans]
        await asyncio.gather(
            *(
                play_table(
                    stubs[k % len(stubs)],
                    stats,
                    maker=makers[k % len(makers)],
                    interval=interval,
                    watchers=args.watchers,
                    background=background,
                )
                for k in range(args.tables)
            )
        )
        usage = await metering
        lag = await lagging
    finally:
        unfinished = [*background, metering, lagging]
        for task in unfinished:
            task.cancel()
        await asyncio.gather(*unfinished, return_exceptions=True)
        for c in chans:
            await c.close()
    stats.usage = usage
    a = stats.actions
    print(f"\n== Service: {title} ==")
    print(
        f"  {args.tables} tables x {SEATS} greedy bots, {args.watchers} watcher(s) per table,"
        f" {args.seconds:.0f} s measured"
        + (f", offered {rate:,.0f} actions/s" if rate else ", closed loop")
    )
    print(f"  actions      {a.rate:>7,.0f} /s   {a.summary()}")
    print(f"  to watchers  {stats.watch.summary()}   ({len(stats.watch.latencies):,} events)")
    print(
        f"  {stats.tables} tables started, {stats.games} games finished, {stats.reads} GetTable,"
        f" {stats.stalls} stalled, errors: {dict(stats.errors) or 'none'}"
    )
    print(f"  {usage.describe(len(a.latencies), 'action')}")
    print(f"  {lag}")
    return stats
