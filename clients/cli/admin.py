"""`rummy admin`: the tools of the people who run the service, over the admin
services (`rummy.admin.v1`), with an operator token (`rummy-admin-token NAME`).

    rummy admin tables [--state active|finished] [--older-than 2h] [--idle-for 30m]
    rummy admin log TABLE_ID [--after SEQ] [--limit N]
    rummy admin end TABLE_ID --reason "why, for the players"
    rummy admin queues [--tickets N]
    rummy admin tickets remove PLAYER_ID [--reason "why, for the player"]

The token comes from --token, else $RUMMY_ADMIN_TOKEN. The tables are the game
service's (--game, by default beside --server on the game port), the queues the
matchmaker's (--server). The servers log every use with the token's name.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import grpc
from google.protobuf.duration_pb2 import Duration

from services.common.pb.rummy.admin.v1 import admin_pb2, admin_pb2_grpc
from services.common.wire.refusals import Refusal

from . import admin_text
from .invocation import DEFAULT_SERVER
from .matchmaking import default_game_target

TOKEN_ENV = "RUMMY_ADMIN_TOKEN"
CALL_TIMEOUT_S = 15.0
NO_TOKEN = (
    f"an operator token is needed: --token TOKEN or ${TOKEN_ENV}"
    " (mint one with `rummy-admin-token NAME` where the servers' secret is)"
)
_SPAN = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86_400}
_STATES = {"active": admin_pb2.TABLE_STATE_ACTIVE, "finished": admin_pb2.TABLE_STATE_FINISHED}


def span(text: str) -> Duration:
    """``90``, ``90s``, ``30m``, ``2h``, ``1d`` as a duration."""
    match = _SPAN.fullmatch(text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a span such as 90s, 30m, 2h or 1d")
    duration = Duration()
    duration.FromMilliseconds(round(float(match[1]) * _UNIT_S[match[2]] * 1000))
    return duration


def add_parser(sub: Any) -> None:
    """`rummy admin` and its commands, under ``sub`` (the main parser's commands)."""
    admin = sub.add_parser(
        "admin",
        help="the operators' tools: tables, their logs, queues (needs an operator token)",
        description="The tools of the people who run the service; every use is logged"
        " with the name the operator token was minted for.",
    )
    verbs = admin.add_subparsers(dest="verb", required=True)

    def command(parent: Any, name: str, help_text: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = parent.add_parser(name, help=help_text)
        parser.add_argument(
            "--server",
            default=os.environ.get("RUMMY_SERVER", "").strip() or DEFAULT_SERVER,
            help="the matchmaker HOST:PORT, for the queues (default: $RUMMY_SERVER, else"
            f" {DEFAULT_SERVER})",
        )
        parser.add_argument(
            "--game",
            default="",
            help="the game service HOST:PORT, for the tables (default: --server's host,"
            " on the game port)",
        )
        parser.add_argument("--tls", action="store_true", help="talk TLS to the servers")
        parser.add_argument(
            "--token",
            default=os.environ.get(TOKEN_ENV, "").strip(),
            help=f"operator token (default: ${TOKEN_ENV})",
        )
        parser.set_defaults(parser=parser)
        return parser

    tables = command(verbs, "tables", "tables by state and age, the longest idle first")
    tables.add_argument(
        "--state",
        choices=sorted(_STATES),
        default=None,
        help="only the tables in this state (default: both)",
    )
    tables.add_argument(
        "--older-than", type=span, default=None, metavar="SPAN", help="made at least this long ago"
    )
    tables.add_argument(
        "--idle-for", type=span, default=None, metavar="SPAN", help="unchanged this long at least"
    )
    tables.add_argument("--limit", type=_count, default=0, help="at most this many (default 50)")

    log = command(verbs, "log", "a table's events, as a spectator saw them")
    log.add_argument("table", help="table id")
    log.add_argument("--after", type=_count, default=0, metavar="SEQ", help="events after this")
    log.add_argument("--limit", type=_count, default=0, help="at most this many (default 1000)")

    end = command(verbs, "end", "end a table's game: its players are told why")
    end.add_argument("table", help="table id")
    end.add_argument("--reason", required=True, help="why, in words shown to the players")

    queues = command(verbs, "queues", "the queues: who waits and how long")
    queues.add_argument(
        "--tickets", type=_count, default=0, metavar="N", help="list up to N tickets of each queue"
    )

    tickets = verbs.add_parser("tickets", help="a player's tickets")
    actions = tickets.add_subparsers(dest="action", required=True)
    remove = command(actions, "remove", "take a player's tickets off the queues")
    remove.add_argument("player", help="player id")
    remove.add_argument("--reason", default="", help="why, in words shown to the player")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError("a count cannot be negative")
    return value


def _channel(target: str, tls: bool) -> grpc.aio.Channel:
    if tls:
        return grpc.aio.secure_channel(target, grpc.ssl_channel_credentials())
    return grpc.aio.insecure_channel(target)


async def _ask(target: str, tls: bool, ask: Callable[[grpc.aio.Channel], Awaitable[str]]) -> str:
    """What ``ask`` says once answered over a channel to ``target``; a refused or
    failed call raises its `Refusal`."""
    async with _channel(target, tls) as channel:
        try:
            return await ask(channel)
        except grpc.aio.AioRpcError as error:
            refusal = Refusal.of_call(error)
            if refusal.code is grpc.StatusCode.UNAVAILABLE and not refusal.reason:
                refusal.message = f"no server answers at {target}: {refusal.message}"
            raise refusal from None


def _asked(
    args: argparse.Namespace, now: datetime
) -> tuple[str, Callable[[grpc.aio.Channel], Awaitable[str]]]:
    """Where the command goes (the game service, or the matchmaker), and its call."""
    auth = (("authorization", f"Bearer {args.token}"),)
    server = args.server
    game = args.game or default_game_target(server)

    if args.verb == "tables":
        request = admin_pb2.ListTablesRequest(
            state=_STATES[args.state] if args.state else admin_pb2.TABLE_STATE_UNSPECIFIED,
            older_than=args.older_than,
            idle_for=args.idle_for,
            limit=args.limit,
        )

        async def list_tables(channel: grpc.aio.Channel) -> str:
            stub = admin_pb2_grpc.TableAdminServiceStub(channel)
            reply = await stub.ListTables(request, metadata=auth, timeout=CALL_TIMEOUT_S)
            return admin_text.tables_text(reply, now)

        return game, list_tables
    if args.verb == "log":
        log_request = admin_pb2.GetTableLogRequest(
            table_id=args.table, after_seq=args.after, limit=args.limit
        )

        async def table_log(channel: grpc.aio.Channel) -> str:
            stub = admin_pb2_grpc.TableAdminServiceStub(channel)
            reply = await stub.GetTableLog(log_request, metadata=auth, timeout=CALL_TIMEOUT_S)
            return admin_text.log_text(reply)

        return game, table_log
    if args.verb == "end":
        end_request = admin_pb2.EndTableRequest(table_id=args.table, reason=args.reason)

        async def end_table(channel: grpc.aio.Channel) -> str:
            stub = admin_pb2_grpc.TableAdminServiceStub(channel)
            reply = await stub.EndTable(end_request, metadata=auth, timeout=CALL_TIMEOUT_S)
            return admin_text.ended_text(reply, args.reason)

        return game, end_table
    if args.verb == "queues":
        queue_request = admin_pb2.ListQueuesRequest(tickets_per_queue=args.tickets)

        async def list_queues(channel: grpc.aio.Channel) -> str:
            stub = admin_pb2_grpc.QueueAdminServiceStub(channel)
            reply = await stub.ListQueues(queue_request, metadata=auth, timeout=CALL_TIMEOUT_S)
            return admin_text.queues_text(reply)

        return server, list_queues
    remove_request = admin_pb2.RemoveTicketsRequest(player_id=args.player, reason=args.reason)

    async def remove_tickets(channel: grpc.aio.Channel) -> str:
        stub = admin_pb2_grpc.QueueAdminServiceStub(channel)
        reply = await stub.RemoveTickets(remove_request, metadata=auth, timeout=CALL_TIMEOUT_S)
        return admin_text.removed_text(reply, args.player)

    return server, remove_tickets


def run(args: argparse.Namespace) -> int:
    """Run one `rummy admin` command; its exit status."""
    if not args.token:
        args.parser.error(NO_TOKEN)
    target, ask = _asked(args, datetime.now(UTC))
    try:
        print(asyncio.run(_ask(target, args.tls, ask)))
    except Refusal as refused:
        print(f"Error: {refused}", file=sys.stderr)
        return 1
    return 0
