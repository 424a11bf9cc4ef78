"""Table options chosen on the command line (`rummy play`, `host`, `bots`).

Each value is checked for its shape as it is parsed (argparse types), and the
whole choice against the rule set with the engine's own check, so a table the
server would refuse is refused here with the same sentence, before any queue.
A value left out (or 0) means the rule set's default, as in `TableOptions`.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from services.common.pb.rummy.v1 import table_pb2
from services.common.wire.options import effective
from services.game.rules import MAX_ELIMINATION_CAP, MAX_ROUNDS, PRESETS, preset

from .cards import plural

MIN_TURN_S, MAX_TURN_S = 0.1, 3600.0
"""The server accepts a turn of 100 ms to one hour."""
MAX_TURN_CAP = 10_000
MAX_BUY_BACKS = 3
MIN_CLAIM_S, MAX_CLAIM_S = 0.5, 60.0
OPENINGS = (30, 40, 51)
"""rami51's opening thresholds."""
RULESETS = tuple(sorted(PRESETS))


def number(
    low: float, high: float, unit: str, *, zero: str | None = "the default"
) -> Callable[[str], float]:
    """An argparse type: a number of ``unit`` from ``low`` to ``high``; 0 too, meaning
    ``zero``, unless that is None."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number of {unit}") from None
        if value == 0 and zero is not None:
            return 0.0
        if not math.isfinite(value) or not low <= value <= high:
            or_zero = f", or 0 for {zero}" if zero is not None else ""
            raise argparse.ArgumentTypeError(
                f"{text} {unit}: give {_shown(low)} to {_shown(high)} {unit}{or_zero}"
            )
        return value

    return parse


def _shown(value: float) -> str:
    """``0.1``, ``3600``, ``10000000``: never ``1e+07``."""
    return f"{value:g}" if value < 1e6 else str(round(value))


def seconds(low: float, high: float, *, zero: str | None = "the default") -> Callable[[str], float]:
    """An argparse type: seconds from ``low`` to ``high`` (see `number`)."""
    return number(low, high, "seconds", zero=zero)


def whole(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value}: give a number from {low} to {high}")
        return value

    return parse


def add_table_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "table options",
        "Left out: the rule set's default. Only players who chose the same "
        "options are seated together.",
    )
    group.add_argument(
        "--turn-timer",
        type=seconds(MIN_TURN_S, MAX_TURN_S),
        default=0.0,
        metavar="SECONDS",
        help="time for one turn (default 45)",
    )
    group.add_argument(
        "--turn-cap",
        type=whole(0, MAX_TURN_CAP),
        default=0,
        metavar="TURNS",
        help="turns after which a round stops and is scored (default 120)",
    )
    group.add_argument(
        "--rounds",
        type=whole(0, MAX_ROUNDS),
        default=0,
        metavar="N",
        help="deals in the game (cafe, rami51, unless played to an elimination cap or"
        f" to 200; default 1, at most {MAX_ROUNDS})",
    )
    group.add_argument(
        "--opening",
        type=int,
        choices=OPENINGS,
        default=0,
        help="rami51: points the opening melds must total (default 40)",
    )
    group.add_argument(
        "--to-200",
        action="store_true",
        help="rami51: deals go on until a deal's winner reaches 200 points",
    )
    group.add_argument(
        "--elimination-cap",
        type=whole(0, MAX_ELIMINATION_CAP),
        default=0,
        metavar="POINTS",
        help="cafe, classic: a player reaching this total is out (classic default 100,"
        f" at most {MAX_ELIMINATION_CAP})",
    )
    group.add_argument(
        "--buy-backs",
        type=whole(0, MAX_BUY_BACKS),
        default=0,
        metavar="N",
        help=f"classic: times an eliminated player may re-enter (0 to {MAX_BUY_BACKS})",
    )
    group.add_argument(
        "--claim-window",
        type=seconds(MIN_CLAIM_S, MAX_CLAIM_S),
        default=0.0,
        metavar="SECONDS",
        help="contract: how long the others may claim a passed-over discard (default 3)",
    )


def table_options(args: argparse.Namespace) -> table_pb2.TableOptions:
    """The options given on the command line, as the request carries them."""
    return table_pb2.TableOptions(
        turn_timer_ms=round(args.turn_timer * 1000),
        turn_cap=args.turn_cap,
        rounds=args.rounds,
        opening_threshold=args.opening,
        to_200=args.to_200,
        elimination_cap=args.elimination_cap,
        buy_backs=args.buy_backs,
        claim_window_ms=round(args.claim_window * 1000),
    )


def refusal(ruleset: str, options: table_pb2.TableOptions) -> str | None:
    """Why these options do not fit ``ruleset`` (the server's own check); None
    when they fit."""
    rules = preset(ruleset)
    try:
        effective(rules, options)
    except ValueError as error:
        return str(error)
    return None


def describe(options: table_pb2.TableOptions) -> str:
    """The options chosen, in words (empty when all are the defaults)."""
    parts = []
    if options.turn_timer_ms:
        parts.append(f"{options.turn_timer_ms / 1000:g} s turns")
    if options.turn_cap:
        parts.append(f"{options.turn_cap}-turn cap")
    if options.rounds:
        parts.append(plural(options.rounds, "deal"))
    if options.opening_threshold:
        parts.append(f"opening {options.opening_threshold}")
    if options.to_200:
        parts.append("to 200")
    if options.elimination_cap:
        parts.append(f"out at {options.elimination_cap}")
    if options.buy_backs:
        parts.append(plural(options.buy_backs, "buy-back"))
    if options.claim_window_ms:
        parts.append(f"{options.claim_window_ms / 1000:g} s claims")
    return ", ".join(parts)
