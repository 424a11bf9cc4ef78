"""Command-line options: checked with a clear message before anything is sent, and
the table options a player chooses reach the table the server makes."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata

import pytest

from clients.cli import main as cli_main
from clients.cli import matchmaking, waiting
from clients.cli.connection import Connection
from clients.cli.identity import MemoryIdentity

from .harness import ROOT, cli_env, servers


def refused_with(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """What `rummy ARGV` says as it stops at the command line (exit status 2)."""
    with pytest.raises(SystemExit) as stopped:
        cli_main.main(list(argv))
    assert stopped.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "5000000", "0.05", "soon"])
def test_a_bad_turn_timer_is_refused_with_a_message(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    said = refused_with(capsys, "play", "--turn-timer", value)
    assert "argument --turn-timer:" in said and "Traceback" not in said
    assert "give 0.1 to 3600 seconds, or 0 for the default" in said or "not a number" in said


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("bots", "-3"), "argument count: -3: give a number from 0 to"),
        (("bots", "2", "--games", "0"), "argument --games: 0: give a number from 1"),
        (("bots", "2", "--duration", "0"), "argument --duration: 0 seconds"),
        (("play", "--rules", "poker"), "argument --rules: invalid choice: 'poker'"),
        (("play", "--rules", "rami51", "--opening", "45"), "invalid choice: 45"),
        (("play", "--opening", "51"), "do not fit cafe: cafe has no opening threshold"),
        (("play", "--rules", "classic", "--to-200"), "classic is not played to a target"),
        (("play", "--rules", "cafe", "--buy-backs", "2"), "cafe has no buy-backs"),
        (("play", "--rules", "classic", "--buy-backs", "4"), "--buy-backs: 4: give a number"),
        (("host", "--claim-window", "2"), "cafe has no claim window (only contract has)"),
        # --rounds where the number of deals is not what ends the game.
        (
            ("play", "--rules", "classic", "--rounds", "3"),
            "do not fit classic: classic is played until players reach the elimination"
            " cap (100), not for a number of rounds",
        ),
        (
            ("host", "--rules", "contract", "--rounds", "2"),
            "contract is played over its 7 deals, not for a number of rounds",
        ),
        (
            ("play", "--rules", "cafe", "--elimination-cap", "200", "--rounds", "3"),
            "cafe with an elimination cap is played until players reach 200",
        ),
        (
            ("bots", "2", "--rules", "rami51", "--to-200", "--rounds", "2"),
            "rami51 to 200 is played until a deal's winner reaches it",
        ),
    ],
)
def test_bad_options_are_refused_before_any_connection(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], says: str
) -> None:
    said = refused_with(capsys, *argv)
    assert says in said, said


@pytest.mark.parametrize(
    "argv",
    [
        ("play", "--rounds", "3"),
        ("host", "--rules", "rami51", "--rounds", "2", "--opening", "51"),
        ("bots", "2", "--rules", "cafe", "--rounds", "20"),
    ],
)
def test_rounds_are_taken_where_they_end_the_game(argv: tuple[str, ...]) -> None:
    args = cli_main.build_parser().parse_args(list(argv))
    assert cli_main._choice(args).options.rounds == int(argv[argv.index("--rounds") + 1])


def test_the_table_options_become_the_queue_request() -> None:
    args = cli_main.build_parser().parse_args(
        [
            *("play", "--rules", "classic", "--players", "3", "--turn-timer", "30"),
            *("--buy-backs", "2", "--elimination-cap", "150", "--turn-cap", "90"),
        ]
    )
    choice = cli_main._choice(args)
    assert (choice.players, choice.ruleset) == (3, "classic")
    options = choice.options
    assert (options.turn_timer_ms, options.turn_cap) == (30_000, 90)
    assert (options.buy_backs, options.elimination_cap) == (2, 150)
    assert choice.words() == (
        "3-player classic table (30 s turns, 90-turn cap, out at 150, 2 buy-backs)"
    )


async def test_a_chosen_rule_set_option_reaches_the_table(fresh_dsn: str) -> None:
    args = cli_main.build_parser().parse_args(
        ["play", "--bots", "--rules", "rami51", "--opening", "51", "--to-200", "--turn-timer", "20"]
    )
    choice = cli_main._choice(args)
    said: list[str] = []
    async with servers(fresh_dsn) as running:
        identity = MemoryIdentity("device-options-0001")
        conn = Connection(running.address, identity.device_id(), "Opal")
        try:
            await conn.login()
            match = await waiting.queue(conn, identity, choice, said.append)
            view = await matchmaking.open_table(conn, identity, match, said.append)
        finally:
            await conn.close()
    assert said[0] == (
        "Looking for a 2-player rami51 table (20 s turns, opening 51, to 200)"
        " (bots fill the empty seats)…"
    )
    assert view.ruleset == "rami51"
    assert view.rules.opening_threshold == 51
    assert view.options.opening_threshold == 51 and view.options.to_200
    assert view.options.turn_timer_ms == 20_000


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    """``python -m clients.cli ARGS``, as a shell runs it."""
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", *args],
        cwd=ROOT,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_package_runs_as_a_module() -> None:
    done = run_module("rules", "score", "KS", "QH", "JC", "AD")
    assert done.returncode == 0, done.stderr
    assert "41" in done.stdout


def every_option(
    parser: argparse.ArgumentParser, path: str = "rummy"
) -> Iterator[tuple[str, str, str | None]]:
    """(command, option or command name, its help) for every option and command of
    the whole command line, subcommands and theirs included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield path, name, helps.get(name)
                yield from every_option(sub, f"{path} {name}")
        else:
            yield path, "/".join(action.option_strings) or action.dest, action.help


def test_every_option_and_command_has_help() -> None:
    seen = list(every_option(cli_main.build_parser()))
    missing = [f"{path}: {name}" for path, name, text in seen if not text or not text.strip()]
    assert not missing, missing
    assert ("rummy admin tables", "--state") in [(p, n) for p, n, _ in seen]
    assert len(seen) > 100  # every subcommand was walked


@pytest.mark.parametrize("command", ["play", "host", "join"])
def test_the_commands_at_a_table_tell_the_card_format_and_the_keys(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli_main.main([command, "-h"])
    assert stopped.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "Cards are written rank then suit: 7S, 10H (or TH), QD, AC, and JK" in shown
    assert "At the table, ? lists the keys" in shown


def test_rummy_version() -> None:
    done = run_module("--version")
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"rummy \S+\n", done.stdout), done.stdout
    assert done.stdout == f"rummy {metadata.version('rummy')}\n"


def test_a_private_table_of_six_is_hosted_in_classic_or_contract_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for rules in ("classic", "contract"):
        args = cli_main.build_parser().parse_args(["host", "--players", "6", "--rules", rules])
        assert cli_main._choice(args).players == 6
    said = refused_with(capsys, "host", "--players", "6", "--rules", "cafe")
    assert "a cafe table seats 2 to 4 players; 6 players play classic and contract only" in said
    said = refused_with(capsys, "play", "--players", "5", "--rules", "contract")
    assert "argument --players: invalid choice: 5" in said
