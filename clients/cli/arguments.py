"""The command line's shared options (which servers, which player on this machine,
which table), and the identity and connection they name."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from services.game.rules import QUICK_MATCH_SIZES

from .connection import Connection
from .identity import Identity, ProfileError, profile_dir
from .invocation import DEFAULT_SERVER
from .options import RULESETS, add_table_options

BOT_LEVELS = ("easy", "normal", "strong")


def server_default() -> str:
    return os.environ.get("RUMMY_SERVER", "").strip() or DEFAULT_SERVER


def add_servers(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server",
        default=server_default(),
        help=f"matchmaker address HOST:PORT (default: $RUMMY_SERVER, else {DEFAULT_SERVER})",
    )
    parser.add_argument(
        "--game", default="", help="game service HOST:PORT (default: where the match says)"
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="talk TLS to the servers (behind a TLS gateway; default: plaintext)",
    )


def add_player(parser: argparse.ArgumentParser) -> None:
    """The servers, and which player of this machine signs in."""
    add_servers(parser)
    parser.add_argument(
        "--config-dir",
        type=Path,
        default=None,
        help="where the device id is kept (default: $XDG_CONFIG_HOME/rummy or ~/.config/rummy)",
    )
    parser.add_argument(
        "--profile",
        default=os.environ.get("RUMMY_PROFILE", "").strip() or None,
        metavar="NAME",
        help="a separate player on this machine, with its own device id and name"
        " (default: $RUMMY_PROFILE, else the machine's one player)",
    )


def add_plain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plain",
        action="store_true",
        default=os.environ.get("RUMMY_PLAIN", "").strip() not in ("", "0"),
        help="a line at a time instead of the full screen, for scripts and screen"
        " readers (default: $RUMMY_PLAIN, else full screen on a terminal)",
    )


def add_common(parser: argparse.ArgumentParser) -> None:
    """What every command that sits at a table takes."""
    add_player(parser)
    parser.add_argument("--name", default=None, help="name shown to the other players (remembered)")
    add_plain(parser)


def add_table_choice(
    parser: argparse.ArgumentParser, sizes: tuple[int, ...] = QUICK_MATCH_SIZES
) -> None:
    parser.add_argument(
        "--players",
        type=int,
        choices=sizes,
        default=2,
        help="seats at the table (default: 2)"
        + ("" if sizes == QUICK_MATCH_SIZES else " (5 or 6: classic and contract only)"),
    )
    parser.add_argument(
        "--rules", choices=RULESETS, default="cafe", help="rule set (default: cafe)"
    )
    add_table_options(parser)


def add_bot_level(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bot-level",
        choices=BOT_LEVELS,
        default="normal",
        help="how well the bots play, if bots take seats (default: normal)",
    )


def identity_of(args: argparse.Namespace) -> Identity:
    if args.config_dir is not None:
        return Identity(args.config_dir)
    try:
        return Identity(profile_dir(args.profile))
    except ProfileError as error:
        args.parser.error(str(error))
        raise  # not reached: error() exits


def connection_of(args: argparse.Namespace, name: str | None = None) -> tuple[Connection, Identity]:
    """A connection signing in as this machine's player, named ``name`` (then
    remembered), else by the name it had."""
    identity = identity_of(args)
    conn = Connection(
        args.server,
        identity.device_id(),
        identity.display_name(name),
        game=args.game,
        tls=args.tls,
    )
    conn.notify = print
    return conn, identity
