"""`python -m bench.matchmaker`: the options, and the run that strings the
ceilings and the phases together and prints the summary. With `--serve` it is
one of the run's server processes instead (see `servers`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import time
from collections.abc import Sequence

import asyncpg
import grpc

import bench.matchmaker
from bench.common import fresh_database, machine_load, pct, server_facts, verdict
from bench.matchmaker.ceilings import claim_ceiling, create_table_ceiling, stream_ceiling
from bench.matchmaker.clients import Clients
from bench.matchmaker.measure import secs
from bench.matchmaker.phases import drain, flow
from bench.matchmaker.servers import Child, serve
from bench.matchmaker.settings import (
    BARE_HOLD_S,
    BARE_STREAMS,
    BURST_PLAYERS,
    PHASE_TIMEOUT_S,
    REPLICAS,
    TARGETS,
)
from bench.matchmaker.store import check_store
from services.common import eventloop
from services.matchmaker.table_maker import CREATE_BATCH, CREATE_IN_FLIGHT


async def run(args: argparse.Namespace) -> None:
    began = time.perf_counter()
    async with fresh_database("bench") as (dsn, source):
        print(
            f"Python {platform.python_version()}, grpcio {grpc.__version__},"
            f" asyncpg {asyncpg.__version__}, {os.cpu_count()} CPUs;"
            f" {await server_facts(dsn)} from {source}; {machine_load()}",
            flush=True,
        )
        claim_rate, claimed = await claim_ceiling(dsn, args.players, 2_000)
        print(
            f"ceiling: claim + record + update in asyncpg, {REPLICAS} workers:"
            f" {claim_rate:,.0f} tickets/s ({claimed:,} tickets)",
            flush=True,
        )
        async with Child("bare", dsn) as bare:
            floor = await stream_ceiling(
                bare.port, bare.pid, BARE_STREAMS, REPLICAS * args.channels
            )
        print(
            f"ceiling: Enqueue from a bare grpc.aio server (its 3 messages, {BARE_HOLD_S:g} s"
            f" apart; no check, no database): {floor.rate:,.0f} streams/s; CPU per stream:"
            f" server {floor.server_ms:.2f} ms, clients {floor.clients_ms:.2f} ms: gRPC's work"
            f" alone caps this machine at {floor.cap():,.0f} tickets/s",
            flush=True,
        )
        async with contextlib.AsyncExitStack() as stack:
            game = await stack.enter_async_context(Child("game", dsn))
            matchers = [
                await stack.enter_async_context(
                    Child("matchmaker", dsn, "--game-target", f"127.0.0.1:{game.port}")
                )
                for _ in range(REPLICAS)
            ]
            meter = {"game": game.pid} | {
                f"matchmaker {i + 1}": m.pid for i, m in enumerate(matchers)
            }
            in_flight = REPLICAS * CREATE_IN_FLIGHT
            table_rate, seat_rate = await create_table_ceiling(
                game.port, args.tables, CREATE_BATCH, in_flight
            )
            print(
                f"ceiling: CreateTables against the game service, {CREATE_BATCH} tables"
                f" per call, {in_flight} calls in flight:"
                f" {table_rate:,.0f} tables/s = {seat_rate:,.0f} seats/s",
                flush=True,
            )
            clients = Clients([m.port for m in matchers], args.channels)
            phases = []
            try:
                async with asyncio.timeout(PHASE_TIMEOUT_S):
                    phases.append(await drain(dsn, clients, matchers, meter, args.players))
                print(phases[-1].report("time from the start of matching to the match"), flush=True)
                for m in matchers:
                    m.command("match")
                async with asyncio.timeout(PHASE_TIMEOUT_S):
                    phases.append(await flow(dsn, clients, meter, args.players, None, "burst"))
                print(phases[-1].report("enqueue-to-match"), flush=True)
                steady = int(args.rate * args.seconds)
                async with asyncio.timeout(PHASE_TIMEOUT_S):
                    phases.append(await flow(dsn, clients, meter, steady, args.rate, "steady"))
                print(phases[-1].report("enqueue-to-match"), flush=True)
                # Within what this machine sustains: half the best rate seen while
                # players were arriving (phases[0] is the drain, with no arrivals).
                half = max(10.0, max(p.rate for p in phases[1:]) / 2)
                async with asyncio.timeout(PHASE_TIMEOUT_S):
                    phases.append(
                        await flow(dsn, clients, meter, int(half * args.seconds), half, "half")
                    )
                print(phases[-1].report("enqueue-to-match"), flush=True)
            finally:
                await clients.close()
            children = [game, *matchers]
            logged = {name: c.complaints() for name, c in zip(meter, children, strict=True)}
        print(f"after the run: {await check_store(dsn)}")
        for name, found in logged.items():
            if found:
                top = ", ".join(f"{what} x{n}" for what, n in found.most_common(4))
                print(f"  {name} logged: {top}")

    drained, burst, steady_phase, half_phase = phases
    best = max(drained.rate, burst.rate)
    p99 = pct(steady_phase.waits(), 99)
    half_p99 = pct(half_phase.waits(), 99)
    print("\n== Summary against the targets ==")
    print(
        f"  tickets matched/s, {args.players:,} queued players, {REPLICAS} replicas:"
        f" drain {drained.rate:,.0f}, burst {burst.rate:,.0f}"
        f"  [target >= {TARGETS['matched_per_s']:,.0f}:"
        f" {verdict(best >= TARGETS['matched_per_s'])}]"
    )
    print(
        f"    ceilings: {seat_rate:,.0f} seats/s of CreateTables ({best / seat_rate:.2f} of it),"
        f" {claim_rate:,.0f} tickets/s of raw claim-and-update ({best / claim_rate:.2f} of it)"
    )
    print(
        f"  p99 enqueue-to-match, {args.rate:,.0f} arrivals/s (partners always waiting):"
        f" {secs(p99)}  [target < {TARGETS['p99_s']:.0f} s: {verdict(p99 < TARGETS['p99_s'])}]"
    )
    burst_p99 = pct(burst.waits(), 99)
    burst_verdict = (
        verdict(burst_p99 < TARGETS["burst_p99_s"])
        if args.players >= BURST_PLAYERS
        else f"not judged, run with --players {BURST_PLAYERS:,}"
    )
    print(
        f"    p50 {secs(pct(steady_phase.waits(), 50))}; sustained for {args.seconds:g} s"
        f"  [target: {TARGETS['matched_per_s']:,.0f} arrivals/s for 30 s]"
    )
    print(
        f"  burst of {args.players:,} players at once: p50 {secs(pct(burst.waits(), 50))},"
        f" p99 {secs(burst_p99)}  [target p99 < {TARGETS['burst_p99_s']:.0f} s"
        f" for 10,000: {burst_verdict}]"
    )
    limit = TARGETS["cpu_per_ticket_ms"]
    for phase, name in ((drained, "drain"), (burst, "burst"), (steady_phase, "steady")):
        cost = phase.cpu_per_ticket_ms()
        print(
            f"  matchmaker CPU per matched ticket, {name}: {cost:.2f} ms"
            f"  [target <= {limit:.1f} ms: {verdict(cost <= limit)}]"
        )
    print(
        f"    floor: {floor.server_ms:.2f} ms of server CPU per stream from a bare grpc.aio"
        f" server; the burst costs {burst.cpu_per_ticket_ms() / floor.server_ms:.1f}x it"
    )
    wanted = TARGETS["matched_per_s"]
    grpc_cores = wanted * (floor.server_ms + floor.clients_ms) / 1000
    rest_ms = (
        sum(
            steady_phase.cpu.per_ticket_ms(who, len(steady_phase.matched))
            for who in ("matchmaker", "PostgreSQL", "game")
            if steady_phase.cpu is not None
        )
        - floor.server_ms
    )
    print(
        f"  gRPC alone (bare server and these clients, nothing else) carries at most"
        f" {floor.cap():,.0f} tickets/s on this machine: a burst of {args.players:,} cannot"
        f" be seated in under {args.players / floor.cap():.1f} s; {wanted:,.0f} arrivals/s"
        f" take {grpc_cores:.2f} of its {os.cpu_count()} cores for gRPC alone, and the"
        f" rest (matchmaking, PostgreSQL, the game server) costs {rest_ms:.2f} ms per"
        f" ticket in the steady phase: {wanted * rest_ms / 1000:.2f} cores more"
    )
    print(
        f"  p99 enqueue-to-match at {half_phase.rate:,.0f} tickets/s (half the best rate"
        f" measured with arrivals): {secs(half_p99)}  [target < {TARGETS['p99_s']:.0f} s:"
        f" {verdict(half_p99 < TARGETS['p99_s'])}]"
    )
    print(f"  total run time {time.perf_counter() - began:.0f} s; {machine_load()}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.matchmaker",
        description=(bench.matchmaker.__doc__ or "").split("\n")[0],
    )
    parser.add_argument(
        "--players", type=int, default=10_000, help="players queued at once (default 10000)"
    )
    parser.add_argument(
        "--rate", type=float, default=1_000.0, help="steady arrivals per second (default 1000)"
    )
    parser.add_argument(
        "--seconds", type=float, default=30.0, help="length of each steady phase (default 30)"
    )
    parser.add_argument(
        "--tables",
        type=int,
        default=2_000,
        help="tables of the CreateTables ceiling (default 2000)",
    )
    parser.add_argument(
        "--channels", type=int, default=4, help="client connections per replica (default 4)"
    )
    parser.add_argument("--serve", choices=("game", "matchmaker", "bare"), help=argparse.SUPPRESS)
    parser.add_argument("--dsn", default="", help=argparse.SUPPRESS)
    parser.add_argument("--port-fd", type=int, default=-1, help=argparse.SUPPRESS)
    parser.add_argument("--game-target", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        eventloop.run(serve(args))
        return
    eventloop.run(run(args))


if __name__ == "__main__":
    main()
