"""`rummy me`, `history`, `top` and `replay`: what a player has played, read from
the game service's PlayerService. Their arguments, and how each one runs.

    rummy me [--name NEW]                        your profile (and a new name)
    rummy history [--limit N] [--more]           your finished games, newest first
    rummy top [--rules cafe] [--limit N] [--more]
                                                 a leaderboard, with your rank
    rummy replay TABLE [--plain]                 a finished game move by move

Each signs in at `--server` with this machine's device id and asks the game
service (`--game`, else where the last match was played, else the matchmaker's
host on the game port).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
from collections.abc import Awaitable, Callable

import grpc

from services.common.wire.refusals import Refusal

from . import history_cmd, matchmaking, profile_cmd, replay_cmd, top_cmd
from .arguments import add_plain, add_player, connection_of
from .cards import Style, colour_wanted, symbols_wanted
from .connection import Connection
from .options import RULESETS, whole
from .reach import sign_in
from .refusals import RETRYABLE

COMMANDS = ("me", "history", "top", "replay")
LIST_DEFAULT = 10
LIST_MOST = 100
"""The most the server sends a page."""
EXAMPLES = """\
  rummy me                                            your ratings, games and wins
  rummy history --limit 5                             your last five games
  rummy top --rules cafe                              the best cafe players
  rummy replay TABLE_ID                               a finished game move by move"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    me = sub.add_parser("me", help="your profile: ratings, games, wins, streak")
    add_player(me)
    me.add_argument("--name", default=None, metavar="NEW", help="change the name others see")

    history = sub.add_parser("history", help="your finished games, newest first")
    add_player(history)
    _paged(history, "games")

    top = sub.add_parser("top", help="a rule set's leaderboard, with your own rank")
    add_player(top)
    top.add_argument("--rules", choices=RULESETS, default="cafe", help="rule set (default: cafe)")
    _paged(top, "players")

    replay = sub.add_parser("replay", help="a finished game move by move, shuffles checked")
    add_player(replay)
    add_plain(replay)
    replay.add_argument("table", help="table id (`rummy history` lists yours)")
    for command in (me, history, top, replay):
        command.set_defaults(parser=command)


def _paged(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--limit",
        type=whole(1, LIST_MOST),
        default=LIST_DEFAULT,
        help=f"{what} a page (default: {LIST_DEFAULT}, at most {LIST_MOST})",
    )
    parser.add_argument(
        "--more", action="store_true", help="the page after the last one shown (same --limit)"
    )


def _warn(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def _count_down(seconds: int) -> None:
    _warn(f"Trying again in {seconds} s (Ctrl-C gives up)…")
    await asyncio.sleep(seconds)


def explained(refused: Refusal, conn: Connection) -> str:
    """A refusal in words; a game service that is not there says how to name it."""
    if refused.code == grpc.StatusCode.UNIMPLEMENTED or refused.code in RETRYABLE:
        return (
            f"No game service answers at {conn.game_target}: pass its address with"
            f" --game HOST:PORT. ({refused})"
        )
    return f"Error: {refused}"


async def _signed_in(conn: Connection, work: Callable[[], Awaitable[int]]) -> int:
    try:
        await sign_in(conn, say=_warn, countdown=_count_down)
        return await work()
    except Refusal as refused:
        _warn(explained(refused, conn))
        return 1
    finally:
        await conn.close()


def _full_screen(args: argparse.Namespace) -> bool:
    return not args.plain and sys.stdin.isatty() and sys.stdout.isatty()


async def _replay_full_screen(conn: Connection, table_id: str, style: Style) -> int:
    from .tui.replay_screen import ReplayApp

    replay = await replay_cmd.load(conn, table_id, style)
    code = await ReplayApp(replay, style).run_async()
    if not replay.verified:
        _warn(f"Shuffles: {replay.shuffles}.")
    return 0 if code is None else code


def run(args: argparse.Namespace) -> int:
    conn, identity = connection_of(args)
    conn.notify = _warn
    conn.use_game(identity.game_target(args.server) or matchmaking.default_game_target(args.server))
    style = Style(colour_wanted(), symbols=symbols_wanted())
    work: Callable[[], Awaitable[int]]
    if args.command == "me":
        work = functools.partial(profile_cmd.me, conn, identity, args.name)
    elif args.command == "history":
        work = functools.partial(
            history_cmd.history, conn, identity, limit=args.limit, more=args.more
        )
    elif args.command == "top":
        work = functools.partial(
            top_cmd.top, conn, identity, ruleset=args.rules, limit=args.limit, more=args.more
        )
    elif _full_screen(args):
        work = functools.partial(_replay_full_screen, conn, args.table, style)
    else:
        work = functools.partial(replay_cmd.tell, conn, args.table, style)
    return asyncio.run(_signed_in(conn, work))
