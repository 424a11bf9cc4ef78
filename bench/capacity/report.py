"""The summary: every figure the issue asks for, beside its target."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.capacity.memory import BareMemory
from bench.capacity.paced import BarePaced
from bench.capacity.settings import SEATS, TARGETS
from bench.capacity.steps import Step
from bench.capacity.thinking import ThinkTimes
from bench.common import verdict
from bench.game.measure import ms

PROFILE_TOP = 12


@dataclass(frozen=True)
class Echo:
    cpu_per_call_ms: float
    """The bare echo server's CPU per unary call, measured in the same run."""


def summary(
    *,
    steps: list[Step],
    stopped: str,
    base_rss: int,
    bare: BareMemory,
    paced: BarePaced,
    echo: Echo,
    think: ThinkTimes,
    profiles: Path,
) -> None:
    held = [s for s in steps if not s.too_slow()]
    peak = (held or steps)[-1]
    number = steps.index(peak) + 1
    players = held[-1].players if held else 0
    print("\n== Summary against the targets ==")
    print(f"  players: {think.describe()}")
    print(
        f"  most concurrent players one game-server process held: {players:,}"
        f" (step {number}: p99 action latency {ms(peak.p99)},"
        f" event-loop lag p99 {ms(peak.lag_p99)})"
        f"  [target >= {TARGETS['players_per_core']:,} per core:"
        f" {verdict(players >= TARGETS['players_per_core'])}]"
    )
    print(f"    the run stopped: {stopped}")
    per_minute = peak.per_player_minute_ms("game server")
    idle = peak.idle.get("game server", 0.0)
    per_core = (1 - idle) * 60_000 / per_minute if per_minute > 0 else float("inf")
    print(
        f"  game server CPU per player-minute at {peak.players:,} players: {per_minute:.2f} ms"
        f" above the idle server's {idle:.3f} cores ({peak.cores('game server'):.2f} cores in"
        f" all); at that rate one core would carry {per_core:,.0f} players"
        f"  [target >= {TARGETS['players_per_core']:,}:"
        f" {verdict(per_core >= TARGETS['players_per_core'])}]"
    )
    per_action = peak.per_action_ms("game server")
    print(
        f"  game server CPU per action at that step: {per_action:.2f} ms above idle (GetTable,"
        f" Watch events, leases and connections included), beside"
        f" {echo.cpu_per_call_ms:.3f} ms per call of a bare grpc.aio echo"
        f"  [target <= {TARGETS['cpu_per_action_ms']:.1f} ms:"
        f" {verdict(per_action <= TARGETS['cpu_per_action_ms'])}]"
    )
    floor = paced.per_action_ms
    actions_per_minute = paced.rate * 60 / max(peak.players, 1)
    floor_per_minute = floor * actions_per_minute
    print(
        f"    gRPC alone at that pace: {floor:.2f} ms per action on a bare grpc.aio server"
        f" ({paced.connections:,} connections, {paced.rate:,.1f} actions/s, each a unary call"
        f" and a message on each of {SEATS} streams), {floor_per_minute:.2f} ms per"
        f" player-minute: one core would carry"
        f" {60_000 / floor_per_minute if floor_per_minute > 0 else float('inf'):,.0f} players"
        f" with nothing but gRPC; the game server costs"
        f" {per_action / floor if floor > 0 else float('nan'):.1f}x that per action"
    )
    game_mem = peak.rss_per_player(base_rss)
    ratio = game_mem / bare.per_connection if bare.per_connection > 0 else float("nan")
    print(
        f"  memory per connected player: {game_mem / 1024:,.1f} KiB on the game server vs"
        f" {bare.per_connection / 1024:,.1f} KiB per connection with one open stream on a bare"
        f" grpc.aio server ({bare.connections:,} connections): {ratio:.2f}x"
    )
    pg = peak.per_player_minute_ms("PostgreSQL")
    print(
        f"  PostgreSQL CPU above idle: {peak.per_action_ms('PostgreSQL'):.2f} ms per action,"
        f" {pg:.2f} ms per player-minute: one PostgreSQL core for"
        f" {60_000 / pg if pg > 0 else float('inf'):,.0f} players at this pace"
    )
    print(
        f"  load processes (apart from the server): {peak.cores('load'):.2f} cores,"
        f" {peak.per_player_minute_ms('load'):.2f} ms per player-minute;"
        f" their event-loop lag p99 at most {ms(peak.loader_lag)}"
    )
    print(f"  where the game server's CPU goes at step {number}:")
    print(f"    threads (cores): {peak.threads}")
    for line in peak.profile.lines(PROFILE_TOP):
        print(f"  {line}")
    print(f"    raw profiles (py-spy's folded stacks): {profiles}")
