"""`rummy bots`: N bot players, and the load generator the benchmarks use.

Without options the bots keep playing (training tables for people who queue
in the same queue) until Ctrl-C. `--games G` stops after G games; `--tables T`
runs enough bots to keep T tables in play, `--rate R` caps the actions per
second, `--duration S` stops after S seconds. A progress line shows games,
actions per second and errors; a summary ends the run (one JSON object with
`--json`), and the exit status is 1 if anything unexpected happened.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, TextIO

import grpc

from . import matchmaking
from .bots import BotPlayer, Pacer, Stats
from .channels import open_channel

PROGRESS_EVERY_S = 1.0
PLAIN_PROGRESS_EVERY_S = 10.0
"""When the output is not a terminal, a progress line now and then, not a spinner."""


@dataclass(frozen=True, slots=True)
class LoadPlan:
    bots: int
    choice: matchmaking.QueueChoice
    games: int | None = None
    tables: int | None = None
    rate: float = 0.0
    duration: float | None = None

    @property
    def players(self) -> int:
        """Enough bots for the tables asked for, and whole tables only."""
        size = self.choice.players
        wanted = max(self.bots, (self.tables or 0) * size, size)
        return -(-wanted // size) * size


def progress_line(stats: Stats) -> str:
    elapsed = max(time.monotonic() - stats.started, 1e-9)
    return (
        f"{elapsed:6.0f}s  tables in play {stats.in_play:3d}  games {len(stats.games):4d}  "
        f"actions {stats.actions:6d} ({stats.actions / elapsed:7.1f}/s)  errors {stats.errors}"
    )


def results(stats: Stats) -> dict[str, Any]:
    """The numbers of a run, for the summary and for `--json` (what benchmarks read)."""
    elapsed = max(time.monotonic() - stats.started, 1e-9)
    values: dict[str, Any] = {
        "duration_s": round(elapsed, 3),
        "games": len(stats.games),
        "actions": stats.actions,
        "actions_per_s": round(stats.actions / elapsed, 2),
        "stale": stats.stale,
        "rate_limited": stats.rate_limited,
        "errors": stats.errors,
        "error_messages": list(stats.messages),
    }
    if stats.latencies:
        ms = sorted(x * 1000 for x in stats.latencies)
        cuts = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else [ms[0]] * 99
        values["latency_ms"] = {
            "p50": round(cuts[49], 2),
            "p95": round(cuts[94], 2),
            "p99": round(cuts[98], 2),
            "max": round(ms[-1], 2),
        }
    return values


def summary(stats: Stats) -> str:
    r = results(stats)
    lines = [
        "Summary",
        f"  duration        {r['duration_s']:.1f} s",
        f"  games finished  {r['games']}",
        f"  actions         {r['actions']} ({r['actions_per_s']:.1f}/s)",
    ]
    if "latency_ms" in r:
        q = r["latency_ms"]
        lines.append(
            f"  action latency  p50 {q['p50']:.1f} ms  p95 {q['p95']:.1f} ms  "
            f"p99 {q['p99']:.1f} ms  max {q['max']:.1f} ms"
        )
    lines.append(f"  stale moves     {r['stale']} (a turn timer was faster)")
    lines.append(f"  rate-limited    {r['rate_limited']} calls, waited out and made again")
    lines.append(f"  errors          {r['errors']}")
    lines += [f"    {m}" for m in r["error_messages"]]
    return "\n".join(lines)


async def _progress(stats: Stats, out: TextIO) -> None:
    live = out.isatty()
    every = PROGRESS_EVERY_S if live else PLAIN_PROGRESS_EVERY_S
    while True:
        await asyncio.sleep(every)
        if live:
            out.write("\r" + progress_line(stats))
        else:
            out.write(progress_line(stats) + "\n")
        out.flush()


async def run(
    server: str,
    plan: LoadPlan,
    out: TextIO = sys.stdout,
    *,
    as_json: bool = False,
    game: str = "",
    tls: bool = False,
) -> int:
    """Run the bots; returns the exit status (1 when an unexpected error happened).
    `game` and `tls` as for `Connection`."""
    stats = Stats()
    pacer = Pacer(plan.rate)
    channels: dict[str, grpc.aio.Channel] = {}
    bots = [
        BotPlayer(
            server,
            f"cli-bot-{i + 1}",
            plan.choice,
            stats,
            pacer=pacer,
            channels=channels,
            game=game,
            tls=tls,
        )
        for i in range(plan.players)
    ]
    # One channel per server for every bot: one machine, one connection, many players.
    channels[server] = open_channel(server, tls=tls)
    print(
        f"{len(bots)} bots queueing for {plan.choice.players}-player "
        f"{plan.choice.ruleset} tables on {server}.",
        file=out,
        flush=True,
    )
    per_bot = None
    if plan.games is not None:
        # Every game seats `players` bots, so this many games each covers the target.
        per_bot = -(-plan.games * plan.choice.players // len(bots))
    tasks = [asyncio.create_task(b.run(per_bot)) for b in bots]
    reporter = asyncio.create_task(_progress(stats, out))
    try:
        await asyncio.wait(tasks, timeout=plan.duration)
    except (asyncio.CancelledError, KeyboardInterrupt):
        pass
    finally:
        for task in (*tasks, reporter):
            task.cancel()
        await asyncio.gather(*tasks, reporter, return_exceptions=True)
        await asyncio.gather(*(b.leave() for b in bots), return_exceptions=True)
        for channel in channels.values():
            await channel.close()
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            stats.error(f"bot crashed: {task.exception()!r}")
    if out.isatty():
        out.write("\n")
    print(progress_line(stats), file=out)
    print(json.dumps(results(stats)) if as_json else summary(stats), file=out, flush=True)
    return 1 if stats.errors else 0
