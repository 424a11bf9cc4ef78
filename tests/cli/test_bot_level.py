"""`--bot-level easy|normal|strong` on `rummy play` and `rummy host`: checked at the
command line, normal by default, and the level reaches the bots of the table."""

from __future__ import annotations

import pytest

from clients.cli import main as cli_main
from clients.cli import matchmaking, waiting
from clients.cli.connection import Connection
from clients.cli.identity import MemoryIdentity
from services.common.pb.rummy.v1 import table_pb2

from .harness import servers


@pytest.mark.parametrize("command", ["play", "host"])
def test_the_bot_level_is_normal_unless_chosen(command: str) -> None:
    parser = cli_main.build_parser()
    assert cli_main._choice(parser.parse_args([command])).bot_level == "normal"
    chosen = cli_main._choice(parser.parse_args([command, "--bot-level", "easy"]))
    assert chosen.bot_level == "easy"
    assert chosen.bot_level_message() == table_pb2.BOT_LEVEL_EASY


def test_an_unknown_bot_level_stops_at_the_command_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli_main.main(["play", "--bots", "--bot-level", "hard"])
    assert stopped.value.code == 2
    assert "--bot-level: invalid choice: 'hard'" in capsys.readouterr().err


async def _table_with_bots(dsn: str, argv: list[str]) -> table_pb2.TableView:
    args = cli_main.build_parser().parse_args(argv)
    choice = cli_main._choice(args)
    async with servers(dsn) as running:
        identity = MemoryIdentity("device-bot-level-0001")
        conn = Connection(running.address, identity.device_id(), "Lea")
        try:
            await conn.login()
            if args.command == "host":
                wait_ms = round(args.bots_after * 1000)
                found = waiting.host(conn, identity, choice, wait_ms, lambda _text: None)
            else:
                found = waiting.queue(conn, identity, choice, lambda _text: None)
            match = await found
            return await matchmaking.open_table(conn, identity, match, lambda _text: None)
        finally:
            await conn.close()


async def test_the_chosen_level_reaches_the_bots_of_a_quick_match(fresh_dsn: str) -> None:
    view = await _table_with_bots(fresh_dsn, ["play", "--bots", "--bot-level", "easy"])
    assert [s.bot_level for s in view.seats if s.is_bot] == [table_pb2.BOT_LEVEL_EASY]


async def test_the_chosen_level_reaches_the_bots_of_a_private_table(fresh_dsn: str) -> None:
    view = await _table_with_bots(
        fresh_dsn, ["host", "--players", "3", "--bots-after", "1", "--bot-level", "strong"]
    )
    assert [s.bot_level for s in view.seats if s.is_bot] == [table_pb2.BOT_LEVEL_STRONG] * 2
