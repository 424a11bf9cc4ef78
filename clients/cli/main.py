"""`rummy`: the reference terminal client. It talks only gRPC, as an app would.

    rummy play --server HOST:PORT [--players 2|3|4] [--rules cafe] [--bots]
               [--bot-level easy|normal|strong] [table options] [--plain] [--profile NAME]
    rummy host [--players 2-6] [--rules cafe] [--bots-after S]
               [--bot-level easy|normal|strong] [table options]
    rummy join CODE
    rummy watch TABLE [--server HOST:PORT] [--game HOST:PORT]
    rummy bots N [--server HOST:PORT] [--players P] [--rules R] [--games G]
                 [--tables T --rate R --duration S] [--json]
    rummy rules check 8S 9S JK [--rules cafe]
    rummy rules score KS QH JC AD [--rules cafe]
    rummy rules show [cafe]
    rummy me [--name NEW]
    rummy history [--limit N] [--more]
    rummy top [--rules cafe] [--limit N] [--more]
    rummy replay TABLE [--plain]
    rummy admin tables|log|end|queues|tickets remove ...   (operators: `rummy admin -h`)

`--server` is the matchmaker (which also signs players in); `make run` prints
its address. The default is $RUMMY_SERVER, else 127.0.0.1:50052. `--tls` talks
TLS (system root certificates) to servers behind a TLS gateway.

On a terminal, `play`, `host` and `join` draw the table full screen; `--plain`
(or output that is not a terminal) keeps a line mode for scripts and screen
readers.
"""

from __future__ import annotations

import os

# gRPC's C core logs failed connection attempts on stderr, line after line (a TLS
# handshake with a plaintext server, say); the client tells what went wrong in a
# sentence of its own. Set before grpc is imported; a level the user set is kept.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from importlib import metadata

from services.common.wire.refusals import Refusal
from services.game.rules import PRESETS

from . import admin, load, matchmaking, player_commands, rules_cmd, waiting
from .arguments import (
    add_bot_level,
    add_common,
    add_servers,
    add_table_choice,
    connection_of,
    identity_of,
)
from .cards import Style, colour_wanted, symbols_wanted
from .connection import Connection
from .identity import Identity, LastMatch
from .options import (
    RULESETS,
    number,
    refusal,
    seconds,
    table_options,
    whole,
)
from .play import Seek, play
from .watch import watch

CARD_FORMAT = (
    "Cards are written rank then suit: 7S, 10H (or TH), QD, AC, and JK for a joker; "
    "lower case and the symbols ♠♥♦♣ work too."
)

AT_THE_TABLE = f"{CARD_FORMAT} At the table, ? lists the keys (with --plain, the typed commands)."
"""The epilog of the commands that sit at a table."""

MAX_BOTS = 100_000
NOBODY_YET = (
    "Nobody else is looking for this table yet. To play bots now: Ctrl-C, then the"
    " same command with --bots."
)
PRIVATE_SIZES = tuple(range(2, max(r.max_players for r in PRESETS.values()) + 1))
"""Seats a private table may have: up to 6, where the rule set allows (the
server says which do)."""
EXAMPLES = """examples:
  rummy play --server 127.0.0.1:50052 --bots          a 2-player game against a bot
  rummy play --players 4 --name Ana                   wait for three other people
  rummy play --rules rami51 --opening 51 --to-200     rami51 to 200, opening at 51
  rummy play --server rummy.example.com:443 --tls     a server behind a TLS gateway
  rummy host --players 3 --rules classic              a private table: tells an invite code
  rummy host --players 6 --rules contract --bots-after 30
                                                      six seats, bots in the empty ones
  rummy join K7QX2M                                   take a seat at a friend's table
  rummy watch TABLE_ID                                follow a table
  rummy bots 4 --players 2 --games 2                  two games between bots
  rummy bots 0 --tables 50 --rate 500 --duration 60   load: 50 tables for a minute
  rummy rules check 8S 9S JK                          what this meld is
  rummy rules score KS QH JC AD                       41
  rummy rules show cafe                               the rule set in words
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rummy",
        description="Play Rummy (rami) from a terminal.",
        epilog=EXAMPLES + player_commands.EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rummy {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="queue for a quick match and play it", epilog=AT_THE_TABLE)
    add_common(play)
    add_table_choice(play)
    play.add_argument("--bots", action="store_true", help="fill the empty seats with bots at once")
    add_bot_level(play)

    host = sub.add_parser(
        "host", help="open a private table, tell its invite code, and play", epilog=AT_THE_TABLE
    )
    add_common(host)
    add_table_choice(host, PRIVATE_SIZES)
    host.add_argument(
        "--bots-after",
        type=seconds(1, 3600, zero="never"),
        default=0.0,
        metavar="SECONDS",
        help="fill the seats still empty with bots after this long (default: never)",
    )
    add_bot_level(host)

    join = sub.add_parser(
        "join", help="take a seat at a private table with its invite code", epilog=AT_THE_TABLE
    )
    add_common(join)
    join.add_argument("code", help="the invite code the host was given")

    watch = sub.add_parser("watch", help="follow a table, as a spectator or from your seat")
    add_common(watch)
    watch.add_argument("table", help="table id")

    bots = sub.add_parser("bots", help="bot players; with --tables/--rate/--duration, load")
    bots.add_argument(
        "count",
        type=whole(0, MAX_BOTS),
        help="number of bot players (0: as many as the tables need)",
    )
    add_servers(bots)
    add_table_choice(bots)
    bots.add_argument(
        "--games", type=whole(1, MAX_BOTS), default=None, help="stop after this many games"
    )
    bots.add_argument(
        "--tables", type=whole(1, MAX_BOTS), default=None, help="tables to keep in play"
    )
    bots.add_argument(
        "--rate",
        type=number(0.01, 1e6, "actions per second", zero="no limit"),
        default=0.0,
        help="actions per second, at most (default: no limit)",
    )
    bots.add_argument(
        "--duration",
        type=seconds(0.1, 1e7, zero=None),
        default=None,
        help="stop after these seconds (default: after --games, else on Ctrl-C)",
    )
    bots.add_argument("--json", action="store_true", help="end with the summary as JSON")

    rules = sub.add_parser("rules", help="the rules engine: check a meld, score a hand, show")
    verbs = rules.add_subparsers(dest="verb", required=True)
    # Not argparse choices: `rules_cmd` names an unknown rule set in its own words.
    rule_set = f"rule set: {', '.join(RULESETS)} (default: cafe)"
    check = verbs.add_parser(
        "check", help="the meld these cards make, or why not", epilog=CARD_FORMAT
    )
    check.add_argument("cards", nargs="+", help="the cards, e.g. 8S 9S JK")
    check.add_argument("--rules", default="cafe", help=rule_set)
    score = verbs.add_parser("score", help="the penalty of cards left in hand", epilog=CARD_FORMAT)
    score.add_argument("cards", nargs="+", help="the cards, e.g. KS QH JC AD")
    score.add_argument("--rules", default="cafe", help=rule_set)
    show = verbs.add_parser("show", help="a rule set in words")
    show.add_argument(
        "name", nargs="?", default="cafe", help=f"rule set: {', '.join(RULESETS)} (default: cafe)"
    )
    player_commands.register(sub)
    for command in (play, host, join, watch, bots):
        command.set_defaults(parser=command)
    admin.add_parser(sub)
    return parser


def _choice(args: argparse.Namespace) -> matchmaking.QueueChoice:
    """The table asked for; a choice the rule set does not allow stops here (exit 2)."""
    options = table_options(args)
    reason = refusal(args.rules, options)
    if reason is not None:
        args.parser.error(f"these table options do not fit {args.rules}: {reason}")
    most = PRESETS[args.rules].max_players
    if args.players > most:
        larger = " and ".join(n for n, r in PRESETS.items() if r.max_players >= args.players)
        args.parser.error(
            f"a {args.rules} table seats 2 to {most} players; {args.players} players play"
            f" {larger} only"
        )
    return matchmaking.QueueChoice(
        players=args.players,
        ruleset=args.rules,
        bots=getattr(args, "bots", False) is True,
        options=options,
        bot_level=getattr(args, "bot_level", "normal"),
    )


def _version() -> str:
    try:
        return metadata.version("rummy")
    except metadata.PackageNotFoundError:
        return "unknown"


def _full_screen(args: argparse.Namespace) -> bool:
    """The table drawn full screen: on a terminal, unless --plain."""
    return not args.plain and sys.stdin.isatty() and sys.stdout.isatty()


def _play_full_screen(args: argparse.Namespace, seek: Seek) -> int:
    conn, identity = connection_of(args)
    with_bots = None
    if args.command == "play" and not args.bots:
        choice = replace(_choice(args), bots=True)
        with_bots = Seek(lambda c, i, say: waiting.queue(c, i, choice, say))
    return _full_screen_app(args, conn, identity, seek, with_bots=with_bots)


def _full_screen_app(
    args: argparse.Namespace,
    conn: Connection,
    identity: Identity,
    seek: Seek,
    *,
    with_bots: Seek | None = None,
    watching: str = "",
) -> int:
    from .tui.app import Journey, RummyApp

    journey = Journey(
        conn=conn,
        identity=identity,
        seek=seek,
        with_bots=with_bots,
        ask_name=not args.name and identity.remembered_name() is None and not watching,
        again=args.command not in ("join", "watch"),
        watching=watching,
    )
    style = Style(colour_wanted(), symbols=symbols_wanted())
    app = RummyApp(journey, style)

    async def run() -> int:
        try:
            code = await app.run_async()
        finally:
            await conn.close()
        return 130 if code is None else code

    return asyncio.run(run())


async def _closing(conn: Connection, work: Callable[[], Awaitable[int]]) -> int:
    try:
        return await work()
    except Refusal as refused:
        print(f"Error: {refused}", file=sys.stderr)
        return 1
    finally:
        await conn.close()


def _seek(args: argparse.Namespace) -> Seek:
    """How `play`, `host` or `join` finds a table when there is none to go back to."""
    if args.command == "join":
        return Seek(
            lambda conn, identity, say: waiting.join(conn, identity, args.code, say),
            instead=waiting.joining(args.code),
        )
    choice = _choice(args)
    if args.command == "host":
        bots_after_ms = round(args.bots_after * 1000)
        return Seek(
            lambda conn, identity, say: waiting.host(conn, identity, choice, bots_after_ms, say),
            instead=waiting.HOSTING,
        )
    slow = "" if choice.bots else NOBODY_YET
    return Seek(lambda conn, identity, say: waiting.queue(conn, identity, choice, say), slow=slow)


def _run(args: argparse.Namespace) -> int:
    if args.command == "admin":
        return admin.run(args)
    if args.command == "rules":
        if args.verb == "check":
            return rules_cmd.check(
                args.cards, args.rules, Style(colour_wanted(), symbols=symbols_wanted())
            )
        if args.verb == "score":
            return rules_cmd.score(args.cards, args.rules)
        return rules_cmd.show(args.name)
    if args.command in player_commands.COMMANDS:
        return player_commands.run(args)
    if args.command == "bots":
        plan = load.LoadPlan(
            bots=args.count,
            choice=_choice(args),
            games=args.games,
            tables=args.tables,
            rate=args.rate,
            duration=args.duration,
        )
        return asyncio.run(
            load.run(args.server, plan, as_json=args.json, game=args.game, tls=args.tls)
        )
    if args.command in ("play", "host", "join"):
        seek = _seek(args)
        if _full_screen(args):
            return _play_full_screen(args, seek)
        named = bool(args.name) or identity_of(args).remembered_name() is not None
        conn, identity = connection_of(args)
        if not named and sys.stdout.isatty():  # asks nothing: scripts run it unattended
            print(f"Playing as {conn.name}: --name NAME changes the name others see.")
        return asyncio.run(_closing(conn, lambda: play(conn, identity, seek)))
    conn, identity = connection_of(args)
    target = identity.game_target(args.server) or matchmaking.default_game_target(args.server)
    conn.use_game(target)
    if _full_screen(args):
        return _full_screen_app(args, conn, identity, Seek(_no_seat), watching=args.table)
    return asyncio.run(_closing(conn, lambda: watch(conn, args.table)))


async def _no_seat(
    _conn: Connection, _identity: Identity, _say: Callable[[str], None]
) -> LastMatch:
    raise AssertionError("a watch finds no table to play")


def _stopped(args: argparse.Namespace) -> str:
    """What Ctrl-C left behind: a seat, or nothing (a wait ends with its stream)."""
    last: LastMatch | None = identity_of(args).last_match(args.server)
    if last is not None and last.table_id:
        return "Stopped. Your seat is kept: run `rummy play` again to rejoin."
    if args.command == "host":
        return "Stopped before the table filled: the private table is closed."
    return "Stopped before a table was found: you are no longer waiting for one."


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        if args.command in ("play", "host", "join"):
            print(f"\n{_stopped(args)}")
        return 130


if __name__ == "__main__":
    sys.exit(main())
