"""One load process: many players, each on its own connection to the game
server with its own Watch stream, playing through the shipped client's bots
(`clients.cli.bots.BotPlayer`: sign in, queue, GetTable, Watch, act on its
turn, queue again after each game) at a human pace.

`python -m bench.capacity --load-worker ...` reads one command per line (JSON)
on stdin, answers each with one JSON line on stdout, and ends when stdin
closes. Several such processes share the load, so that no single client event
loop is the limit; each reports its own CPU and event-loop lag."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import random
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import grpc

from bench.capacity.bare_pace import BarePace
from bench.capacity.settings import (
    OPEN_BATCH,
    OPTIONS,
    RULESET,
    SEATS,
    SHARED_MATCHMAKER_CHANNELS,
)
from bench.capacity.thinking import Thinking, ThinkTimes
from bench.common import cpu_seconds, pct
from bench.game.settings import BARE_SERVICE
from clients.cli.bots import BotPlayer, Stats
from clients.cli.channels import channel_options
from clients.cli.matchmaking import QueueChoice
from services.common.heap import freeze_heap

CHOICE = QueueChoice(players=SEATS, ruleset=RULESET, options=OPTIONS)
LAG_TICK_S = 0.025


def own_channel(target: str, index: int) -> grpc.aio.Channel:
    """A channel with a connection of its own, as a phone has: channels with equal
    arguments would share one connection (gRPC's global subchannel pool)."""
    return grpc.aio.insecure_channel(
        target,
        options=[*channel_options(), ("grpc.use_local_subchannel_pool", 1), ("bench.i", index)],
    )


class LagProbe:
    """How late this process's event loop runs a timer: its own saturation."""

    def __init__(self) -> None:
        self.late: list[float] = []
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + LAG_TICK_S
            await asyncio.sleep(LAG_TICK_S)
            self.late.append(max(0.0, loop.time() - due))

    def close(self) -> None:
        self._task.cancel()


@dataclass
class Player:
    bot: BotPlayer
    channel: grpc.aio.Channel
    task: asyncio.Task[None]


class Crowd:
    """This process's players, and the bare streams of the memory and CPU
    comparisons."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.matchmaker = args.matchmaker
        self.game = args.game
        self.name = f"w{args.worker}"
        self.stats = Stats()
        self.pacer = Thinking(ThinkTimes(args.think_median, args.think_sigma), random.Random())
        self.shared = [
            grpc.aio.insecure_channel(
                self.matchmaker, options=[("grpc.use_local_subchannel_pool", 1), ("bench.i", i)]
            )
            for i in range(SHARED_MATCHMAKER_CHANNELS)
        ]
        self.players: list[Player] = []
        self.gone = 0
        self.bare: list[tuple[grpc.aio.Channel, Any]] = []
        self.paced = BarePace(own_channel)
        self.lag = LagProbe()

    async def grow(self, total: int, rate: float) -> dict[str, Any]:
        """Players up to ``total``, started ``rate`` per second."""
        began, first = time.perf_counter(), len(self.players)
        for i in range(first, total):
            delay = began + (i - first) / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            self._add(i)
        return {"players": len(self.players)}

    def _add(self, i: int) -> None:
        game_channel = own_channel(self.game, i)
        channels = {self.matchmaker: self.shared[i % len(self.shared)], self.game: game_channel}
        bot = BotPlayer(
            self.matchmaker,
            f"{self.name}-{i}",
            CHOICE,
            self.stats,
            pacer=self.pacer,
            channels=channels,
            game=self.game,
        )
        self.players.append(Player(bot, game_channel, asyncio.create_task(self._play(bot))))

    async def _play(self, bot: BotPlayer) -> None:
        try:
            await bot.run()  # returns only on a refusal it could not get past
        except Exception as error:
            self.stats.error(f"{bot.conn.name}: {error!r}")
        self.gone += 1

    async def window(self, seconds: float) -> dict[str, Any]:
        """What the players did over the next ``seconds``."""
        # The players connected by now live all the run: out of the collections,
        # whose full passes over them stalled this process 100 to 250 ms at 1,000
        # players, and every action it was timing with them.
        gc.freeze()
        s = self.stats
        first, actions, errors, told = len(s.latencies), s.actions, s.errors, len(s.messages)
        games, cpu = len(s.games), cpu_seconds("self")
        self.lag.late.clear()
        await asyncio.sleep(seconds)
        return {
            "latencies": s.latencies[first:],
            "actions": s.actions - actions,
            "errors": s.errors - errors,
            "messages": s.messages[told:],
            "games": len(s.games) - games,
            "players": len(self.players) - self.gone,
            "seated": sum(1 for p in self.players if p.bot.table_id),
            "cpu_s": cpu_seconds("self") - cpu,
            "lag_p99_s": pct(self.lag.late, 99),
        }

    async def stop(self) -> dict[str, Any]:
        """Every player gone (their connections closed): the server is left idle."""
        tasks = [p.task for p in self.players]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(p.channel.close() for p in self.players), return_exceptions=True)
        self.players.clear()
        return {"players": 0}

    async def open_bare(self, target: str, count: int) -> dict[str, Any]:
        """``count`` connections to the bare server, each holding one stream."""

        async def one(i: int) -> tuple[grpc.aio.Channel, Any]:
            chan = own_channel(target, i)
            hold: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = chan.unary_stream(
                f"/{BARE_SERVICE}/Hold"
            )
            call = hold(b"", wait_for_ready=True)
            await call.read()
            return chan, call

        for lo in range(0, count, OPEN_BATCH):
            self.bare += await asyncio.gather(
                *(one(i) for i in range(lo, min(count, lo + OPEN_BATCH)))
            )
        return {"opened": len(self.bare)}

    async def close_bare(self) -> dict[str, Any]:
        for _chan, call in self.bare:
            call.cancel()
        await asyncio.gather(*(chan.close() for chan, _ in self.bare), return_exceptions=True)
        self.bare.clear()
        return {"opened": 0}

    async def close(self) -> None:
        self.lag.close()
        await self.stop()
        await self.close_bare()
        await self.paced.close()
        for chan in self.shared:
            await chan.close()


async def work(args: argparse.Namespace) -> None:
    """The load process: commands from stdin until it closes."""
    freeze_heap()  # as the servers do: full collections would stall every call timed
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def read_stdin() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=read_stdin, daemon=True).start()
    crowd = Crowd(args)
    try:
        while (line := await lines.get()) is not None:
            command = json.loads(line)
            try:
                reply = await _do(crowd, command)
            except Exception as error:
                reply = {"error": repr(error)}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    finally:
        with contextlib.suppress(Exception):
            await crowd.close()


async def _do(crowd: Crowd, command: dict[str, Any]) -> dict[str, Any]:
    match command["do"]:
        case "grow":
            return await crowd.grow(command["players"], command["rate"])
        case "window":
            return await crowd.window(command["seconds"])
        case "stop":
            return await crowd.stop()
        case "bare":
            return await crowd.open_bare(command["target"], command["count"])
        case "close-bare":
            return await crowd.close_bare()
        case "pace-open":
            return await crowd.paced.open(command["target"], command["count"])
        case "pace":
            return await crowd.paced.run(command["rate"], command["seconds"])
        case "pace-close":
            return await crowd.paced.close()
    raise ValueError(f"unknown command {command!r}")
