"""The capacity run's options, with `--quick`'s small settings."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

import bench.capacity

QUICK = {
    "start": 8,
    "max_players": 8,
    "ramp_rate": 200.0,
    "settle": 1.0,
    "seconds": 2.0,
    "echo_seconds": 0.5,
    "idle_seconds": 0.5,
    "think_median": 0.2,
    "loaders": 2,
}
"""`--quick`: one step of two tables, fast thinkers: every figure printed in seconds."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.capacity", description=(bench.capacity.__doc__ or "").split("\n")[0]
    )
    p.add_argument("--start", type=int, default=400, help="players of the first step (400)")
    p.add_argument(
        "--growth", type=float, default=1.5, help="each step has this many times more (1.5)"
    )
    p.add_argument(
        "--max-players",
        type=int,
        default=15_000,
        help="no step has more (15000: every connection is a file descriptor on both sides)",
    )
    p.add_argument(
        "--minutes", type=float, default=30.0, help="no step starts past this run time (30)"
    )
    p.add_argument("--seconds", type=float, default=30.0, help="measured seconds per step (30)")
    p.add_argument(
        "--settle", type=float, default=15.0, help="seconds between growing and measuring (15)"
    )
    p.add_argument("--ramp-rate", type=float, default=200.0, help="players added per second (200)")
    p.add_argument("--think-median", type=float, default=3.0, help="median think time, seconds (3)")
    p.add_argument(
        "--think-sigma", type=float, default=0.6, help="sigma of the lognormal think time (0.6)"
    )
    p.add_argument(
        "--loaders",
        type=int,
        default=max(2, min(8, (os.cpu_count() or 2) // 2)),
        help="load processes (half the CPUs, 2 to 8)",
    )
    p.add_argument(
        "--echo-seconds", type=float, default=3.0, help="measured seconds of the echo (3)"
    )
    p.add_argument(
        "--idle-seconds",
        type=float,
        default=10.0,
        help="seconds the idle servers' CPU is measured before the first step (10)",
    )
    p.add_argument(
        "--keep-going",
        action="store_true",
        help="measure every step up to --max-players even past the latency limits"
        " (a busy machine: the figures per player, not the capacity)",
    )
    p.add_argument("--no-profile", dest="profile", action="store_false", help="skip py-spy")
    p.add_argument(
        "--native", action="store_true", help="py-spy samples C frames too (slower to sample)"
    )
    p.add_argument(
        "--profile-dir", default="", help="where py-spy's raw profiles go (a new temporary one)"
    )
    p.add_argument("--quick", action="store_true", help="one small step, for a smoke test")
    p.add_argument("--load-worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--matchmaker", default="", help=argparse.SUPPRESS)
    p.add_argument("--game", default="", help=argparse.SUPPRESS)
    return p


def options(argv: Sequence[str] | None = None) -> argparse.Namespace:
    args = parser().parse_args(argv)
    if args.quick:
        for name, value in QUICK.items():
            setattr(args, name, value)
    return args
