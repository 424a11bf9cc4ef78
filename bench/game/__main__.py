"""`python -m bench.game`: the phases one after the other, then the summary
against the targets; with `--serve ROLE`, one of its server processes."""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Sequence

import asyncpg
import grpc

import bench.game
from bench.common import fresh_database, machine_load, pct, server_facts, verdict
from bench.game.ceilings import act_ceiling, ceilings, echo_ceiling
from bench.game.load import service_load
from bench.game.measure import ms
from bench.game.memory import memory
from bench.game.servers import Child, serve
from bench.game.settings import STREAM_COUNTS, TARGETS
from bench.game.timeouts import timeouts
from services.common import eventloop


async def run(args: argparse.Namespace) -> None:
    began = time.perf_counter()
    async with fresh_database("bench") as (dsn, source):
        print(
            f"Python {platform.python_version()}, grpcio {grpc.__version__},"
            f" asyncpg {asyncpg.__version__}, {os.cpu_count()} CPUs;"
            f" {await server_facts(dsn)} from {source}; {machine_load()}"
        )
        ceiling = await ceilings(dsn, args)
        echo, echo_usage = await echo_ceiling(args)
        bare_act, bare_act_usage = await act_ceiling(args)
        async with Child("game", dsn) as server:
            peak = await service_load(server, args, None, "peak (closed loop)")
            ratio = peak.actions.rate / ceiling["after"].rate
            print(
                f"  ratio to the asyncpg ceiling (NOTIFY after commit): {ratio:.2f}"
                f"  [target >= {TARGETS['ceiling_ratio']:.2f}:"
                f" {verdict(ratio >= TARGETS['ceiling_ratio'])}]"
            )
            half_rate = peak.actions.rate / 2
            half = await service_load(server, args, half_rate, "about half of peak (rate-limited)")
            half_p99 = pct(half.actions.latencies, 99)
            print(
                f"  p99 action latency {ms(half_p99)}"
                f"  [target < {TARGETS['half_load_p99_ms']:.0f} ms:"
                f" {verdict(half_p99 * 1000 < TARGETS['half_load_p99_ms'])}]"
            )
            late = await timeouts(server, dsn, args)
        game_mem, bare_mem = await memory(dsn, args)

    same = ceiling["after"].rate
    top = STREAM_COUNTS[-1]
    mem_ratio = game_mem.per_stream(top) / bare_mem.per_stream(top)
    print("\n== Summary against the targets ==")
    print(
        f"  service {peak.actions.rate:,.0f} actions/s vs {same:,.0f} tx/s for the same"
        f" transaction from asyncpg (NOTIFY after commit): {ratio:.2f}"
        f"  [target >= {TARGETS['ceiling_ratio']:.2f}:"
        f" {verdict(ratio >= TARGETS['ceiling_ratio'])}]"
    )
    print(
        f"    (vs NOTIFY inside, {ceiling['inside'].rate:,.0f} tx/s:"
        f" {peak.actions.rate / ceiling['inside'].rate:.2f};"
        f" vs the raw gRPC echo, {echo.rate:,.0f} calls/s: {peak.actions.rate / echo.rate:.2f})"
    )
    print(
        f"    (vs the service's own compare-and-set from asyncpg,"
        f" {ceiling['cas'].rate:,.0f} tx/s: {peak.actions.rate / ceiling['cas'].rate:.2f})"
    )
    assert peak.usage is not None
    per_action = peak.usage.used["game server"] * 1000 / max(len(peak.actions.latencies), 1)
    per_echo = echo_usage.used["echo server"] * 1000 / max(len(echo.latencies), 1)
    per_bare = bare_act_usage.used["bare server"] * 1000 / max(len(bare_act.latencies), 1)
    print(
        f"  game server CPU per action at peak: {per_action:.2f} ms, beside"
        f" {per_echo:.2f} ms per call of the bare echo server"
        f"  [target <= {TARGETS['cpu_per_action_ms']:.1f} ms:"
        f" {verdict(per_action <= TARGETS['cpu_per_action_ms'])}]"
    )
    print(
        f"    (an action's gRPC work alone, the call and its {args.watchers} watcher"
        f" message(s) on a bare server: {per_bare:.2f} ms; the game costs"
        f" {per_action / per_bare:.1f}x it)"
    )
    pg_action = peak.usage.used.get("PostgreSQL", 0.0) * 1000 / max(len(peak.actions.latencies), 1)
    print(f"    (PostgreSQL CPU per action at peak: {pg_action:.2f} ms)")
    print(
        f"  p99 action latency at {half.actions.rate:,.0f} actions/s"
        f" ({half.actions.rate / peak.actions.rate:.0%} of peak): {ms(half_p99)}"
        f"  [target < {TARGETS['half_load_p99_ms']:.0f} ms:"
        f" {verdict(half_p99 * 1000 < TARGETS['half_load_p99_ms'])}]"
    )
    print(
        f"  commit-to-watcher p50 / p99: {ms(pct(half.watch.latencies, 50))} /"
        f" {ms(pct(half.watch.latencies, 99))} at half load,"
        f" {ms(pct(peak.watch.latencies, 50))} / {ms(pct(peak.watch.latencies, 99))} at peak"
    )
    for count, lateness in zip((max(1, args.tables // 5), args.tables), late, strict=True):
        p99 = pct(lateness, 99)
        print(
            f"  timeout lateness p99, {count} tables of {args.timer_ms} ms: {ms(p99)}"
            f"  [target < {TARGETS['timeout_late_p99_ms']:.0f} ms:"
            f" {verdict(p99 * 1000 < TARGETS['timeout_late_p99_ms'])}]"
        )
    print(
        f"  {top:,} idle watchers: {game_mem.per_stream(top):,.0f} B/stream vs bare"
        f" {bare_mem.per_stream(top):,.0f} B/stream: {mem_ratio:.2f}x"
        f"  [target <= {TARGETS['stream_memory_ratio']:.2f}x:"
        f" {verdict(mem_ratio <= TARGETS['stream_memory_ratio'])}]"
    )
    print(f"  total run time {time.perf_counter() - began:.0f} s; {machine_load()}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.game", description=(bench.game.__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "--seconds", type=float, default=6.0, help="measured seconds of each phase (default 6)"
    )
    parser.add_argument(
        "--tables", type=int, default=100, help="concurrent tables under load (default 100)"
    )
    parser.add_argument(
        "--watchers", type=int, default=1, help="Watch streams per played table (default 1)"
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=16,
        help="asyncpg connections driving the ceiling (default 16)",
    )
    parser.add_argument(
        "--timer-ms", type=int, default=300, help="turn timer of the timeout tables (default 300)"
    )
    parser.add_argument(
        "--stream-channels",
        type=int,
        default=10,
        help="connections carrying the idle streams (default 10)",
    )
    parser.add_argument("--serve", choices=("game", "bare"), help=argparse.SUPPRESS)
    parser.add_argument("--dsn", default="", help=argparse.SUPPRESS)
    parser.add_argument("--port-fd", type=int, default=-1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        eventloop.run(serve(args.serve, args.dsn, args.port_fd))
        return
    eventloop.run(run(args))


if __name__ == "__main__":
    main()
