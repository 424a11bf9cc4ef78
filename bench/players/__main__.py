"""`python -m bench.players`: load each size, time the reads, then the summary."""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Sequence

import asyncpg
import grpc

import bench.players
from bench.common import fresh_database, machine_load, pct, server_facts
from bench.game.servers import Child
from bench.players.load import Loader
from bench.players.measure import Figure, Reads
from services.common import eventloop

SIZES = (10_000, 100_000, 1_000_000)


async def run(args: argparse.Namespace) -> dict[int, list[Figure]]:
    began = time.perf_counter()
    results: dict[int, list[Figure]] = {}
    async with fresh_database("bench_players") as (dsn, source):
        print(
            f"Python {platform.python_version()}, grpcio {grpc.__version__},"
            f" asyncpg {asyncpg.__version__}, {os.cpu_count()} CPUs;"
            f" {await server_facts(dsn)} from {source}; {machine_load()}"
        )
        loader = Loader(total_planned=max(args.sizes))
        con = await asyncpg.connect(dsn)
        try:
            async with Child("game", dsn) as server:
                for size in args.sizes:
                    started = time.perf_counter()
                    await loader.load(con, size)
                    loaded = loader.loaded
                    print(
                        f"\n== {size:,} games, {loaded.players:,} players,"
                        f" {len(loaded.standings):,} standings: loaded in"
                        f" {time.perf_counter() - started:.0f} s; {machine_load()} =="
                    )
                    print(
                        f"  {'read':<24} {'p50':>7} {'p99':>7}    |"
                        f"      {'p50':>7} {'p99':>7}    | rpc/bare | plan"
                    )
                    reads = Reads(server.port, con, loaded, seed=size)
                    try:
                        results[size] = await reads.all(args.samples)
                    finally:
                        await reads.close()
                    for figure in results[size]:
                        print(figure.line())
        finally:
            await con.close()
    summary(results)
    print(f"\n  total run time {time.perf_counter() - began:.0f} s; {machine_load()}")
    return results


def summary(results: dict[int, list[Figure]]) -> None:
    sizes = sorted(results)
    print("\n== Summary: p50 / p99 in ms by games loaded (rpc; bare statements) ==")
    print("  " + f"{'read':<34}" + "".join(f"{s:>22,}" for s in sizes))
    for k, figure in enumerate(results[sizes[0]]):
        for label, pick in (("", "rpc"), (" (bare)", "bare")):
            cells = []
            for s in sizes:
                values = getattr(results[s][k], pick)
                cells.append(f"{pct(values, 50) * 1000:9.2f} /{pct(values, 99) * 1000:8.2f}")
            print(f"  {figure.name + label:<34}" + "".join(f"{c:>22}" for c in cells))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.players", description=(bench.players.__doc__ or "").split("\n")[0]
    )
    parser.add_argument(
        "--sizes",
        type=lambda text: tuple(int(s) for s in text.split(",")),
        default=SIZES,
        help="games loaded at each step, ascending (default 10000,100000,1000000)",
    )
    parser.add_argument(
        "--samples", type=int, default=300, help="timed calls of each read at each size"
    )
    args = parser.parse_args(argv)
    if list(args.sizes) != sorted(args.sizes):
        parser.error("--sizes must ascend: each size is loaded on top of the one before")
    eventloop.run(run(args))


if __name__ == "__main__":
    main()
