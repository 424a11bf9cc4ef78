"""`rummy`: the reference terminal client. It talks only gRPC, as an app would.

    rummy play --server HOST:PORT [--players 2|3|4] [--rules cafe] [--bots] [--name NAME]
    rummy watch TABLE [--server HOST:PORT] [--game HOST:PORT]
    rummy bots N [--server HOST:PORT] [--players P] [--rules R] [--games G]
                 [--tables T --rate R --duration S] [--json]
    rummy rules check 8S 9S JK [--rules cafe]
    rummy rules score KS QH JC AD [--rules cafe]
    rummy rules show [cafe]

`--server` is the matchmaker (which also signs players in); `make run` prints
its address. The default is $RUMMY_SERVER, else 127.0.0.1:50052.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from . import load, matchmaking, rules_cmd
from .cards import Style, colour_wanted
from .connection import Connection, Refused
from .identity import Identity
from .play import play
from .watch import watch

DEFAULT_SERVER = "127.0.0.1:50052"
EXAMPLES = """examples:
  rummy play --server 127.0.0.1:50052 --bots          a 2-player game against a bot
  rummy play --players 4 --name Ana                   wait for three other people
  rummy watch TABLE_ID                                follow a table
  rummy bots 4 --players 2 --games 2                  two games between bots
  rummy bots 0 --tables 50 --rate 500 --duration 60   load: 50 tables for a minute
  rummy rules check 8S 9S JK                          what this meld is
  rummy rules score KS QH JC AD                       41
  rummy rules show cafe                               the rule set in words"""


def _server_default() -> str:
    return os.environ.get("RUMMY_SERVER", "").strip() or DEFAULT_SERVER


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--server", default=_server_default(), help="matchmaker address HOST:PORT")
    parser.add_argument(
        "--config-dir",
        type=Path,
        default=None,
        help="where the device id is kept (default: $XDG_CONFIG_HOME/rummy or ~/.config/rummy)",
    )
    parser.add_argument("--name", default=None, help="name shown to the other players")
    parser.add_argument(
        "--game", default="", help="game service HOST:PORT (default: where the match says)"
    )


def _queue_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    parser.add_argument("--rules", default="cafe", help="rule set (default: cafe)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rummy",
        description="Play Rummy (rami) from a terminal.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="queue for a quick match and play it")
    _common(play)
    _queue_options(play)
    play.add_argument("--bots", action="store_true", help="fill the empty seats with bots at once")
    play.add_argument(
        "--turn-timer", type=float, default=0, help="seconds per turn (default: the server's, 45)"
    )

    watch = sub.add_parser("watch", help="follow a table, as a spectator or from your seat")
    _common(watch)
    watch.add_argument("table", help="table id")

    bots = sub.add_parser("bots", help="bot players; with --tables/--rate/--duration, load")
    bots.add_argument("count", type=int, help="number of bot players")
    bots.add_argument("--server", default=_server_default(), help="matchmaker address")
    _queue_options(bots)
    bots.add_argument("--games", type=int, default=None, help="stop after this many games")
    bots.add_argument("--tables", type=int, default=None, help="tables to keep in play")
    bots.add_argument("--rate", type=float, default=0.0, help="actions per second, at most")
    bots.add_argument("--duration", type=float, default=None, help="stop after these seconds")
    bots.add_argument("--json", action="store_true", help="end with the summary as JSON")

    rules = sub.add_parser("rules", help="the rules engine: check a meld, score a hand, show")
    verbs = rules.add_subparsers(dest="verb", required=True)
    check = verbs.add_parser("check", help="the meld these cards make, or why not")
    check.add_argument("cards", nargs="+")
    check.add_argument("--rules", default="cafe")
    score = verbs.add_parser("score", help="the penalty of cards left in hand")
    score.add_argument("cards", nargs="+")
    score.add_argument("--rules", default="cafe")
    show = verbs.add_parser("show", help="a rule set in words")
    show.add_argument("name", nargs="?", default="cafe")
    return parser


def _connection(args: argparse.Namespace) -> tuple[Connection, Identity]:
    identity = Identity(args.config_dir)
    conn = Connection(
        args.server, identity.device_id(), identity.display_name(args.name), game=args.game
    )
    conn.notify = print
    return conn, identity


async def _closing(conn: Connection, work: Callable[[], Awaitable[int]]) -> int:
    try:
        return await work()
    except Refused as refused:
        print(f"Error: {refused}", file=sys.stderr)
        return 1
    finally:
        await conn.close()


def _run(args: argparse.Namespace) -> int:
    if args.command == "rules":
        if args.verb == "check":
            return rules_cmd.check(args.cards, args.rules, Style(colour_wanted()))
        if args.verb == "score":
            return rules_cmd.score(args.cards, args.rules)
        return rules_cmd.show(args.name)
    if args.command == "bots":
        plan = load.LoadPlan(
            bots=max(1, args.count),
            choice=matchmaking.QueueChoice(players=args.players, ruleset=args.rules),
            games=args.games,
            tables=args.tables,
            rate=args.rate,
            duration=args.duration,
        )
        return asyncio.run(load.run(args.server, plan, as_json=args.json))
    conn, identity = _connection(args)
    if args.command == "play":
        choice = matchmaking.QueueChoice(
            players=args.players,
            ruleset=args.rules,
            bots=args.bots,
            turn_timer_ms=int(args.turn_timer * 1000),
        )
        return asyncio.run(_closing(conn, lambda: play(conn, identity, choice)))
    conn.use_game(identity.game_target(args.server))
    return asyncio.run(_closing(conn, lambda: watch(conn, args.table)))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        if args.command == "play":
            print("\nStopped. Your seat is kept: run `rummy play` again to rejoin.")
        return 130


if __name__ == "__main__":
    sys.exit(main())
