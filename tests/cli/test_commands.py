"""The short commands typed at the table."""

from __future__ import annotations

import pytest

from clients.cli import commands as C
from clients.cli.cards import CardError, normalize


@pytest.mark.parametrize(
    ("typed", "code"),
    [
        ("7S", "7S"),
        ("7s", "7S"),
        ("10S", "TS"),
        ("10h", "TH"),
        ("ts", "TS"),
        ("7♠", "7S"),
        ("q♥", "QH"),
        ("jk", "JK"),
        ("Joker", "JK"),
        ("as", "AS"),
    ],
)
def test_card_names_are_forgiving(typed: str, code: str) -> None:
    assert normalize(typed) == code


@pytest.mark.parametrize("typed", ["7Z", "1S", "11H", "S", "", "7SS"])
def test_what_is_not_a_card_says_how_to_write_one(typed: str) -> None:
    with pytest.raises(CardError, match="write it like 7S"):
        normalize(typed)


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("d", C.Draw()),
        ("  D ", C.Draw()),
        ("draw", C.Draw()),
        ("t", C.Take()),
        ("h", C.Hint()),
        ("?", C.Help()),
        ("v", C.Show()),
        ("q", C.Quit()),
        ("", C.Nothing()),
        ("x qd", C.DiscardCommand("QD")),
        ("x 10♦", C.DiscardCommand("TD")),
        ("m 7s 8S 9♠", C.MeldCommand((("7S", "8S", "9S"),))),
        ("m 7S 8S 9S / QH QD QC", C.MeldCommand((("7S", "8S", "9S"), ("QH", "QD", "QC")))),
        ("m 7S 8S JK, qh qd qc,", C.MeldCommand((("7S", "8S", "JK"), ("QH", "QD", "QC")))),
        ("l 3 ts", C.LayOffCommand(3, ("TS",))),
        ("l [3] TS JS", C.LayOffCommand(3, ("TS", "JS"))),
        ("l 3 jk low", C.LayOffCommand(3, ("JK",), "low")),
        ("s 2 9h", C.SwapCommand(2, ("9H",))),
        ("s [2] qh qc", C.SwapCommand(2, ("QH", "QC"))),
    ],
)
def test_commands_parse(line: str, command: C.Command) -> None:
    assert C.parse(line) == command


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("x", "Name one card"),
        ("x QD KD", "Name one card"),
        ("x 7Z", "'7Z' is not a card"),
        ("m", "Name the cards"),
        ("m / ,", "Name the cards"),
        ("l 3", "Name a meld number and the cards"),
        ("l x TS", "'x' is not a meld number"),
        ("l 3 high", "Name the cards to lay off"),
        ("s 2", "Write it like: s 2 9H"),
        ("s 2 QH QC QS", "the card \\(or two\\) the joker stands for"),
        ("dance", "Unknown command 'dance'"),
        ("d 7S", "'d' takes nothing after it"),
    ],
)
def test_malformed_commands_say_how_to_write_them(line: str, says: str) -> None:
    with pytest.raises(C.CommandError, match=says):
        C.parse(line)


def test_the_help_lists_every_command() -> None:
    for example in ("d ", "t ", "m 7S 8S 9S", "l 3 TS", "s 2 9H", "x QD", "h ", "? ", "q "):
        assert example in C.HELP


def test_put_back_and_claim_commands_parse() -> None:
    from clients.cli.commands import ClaimCommand, PutBack, parse

    assert parse("r") == PutBack()
    assert parse("claim") == ClaimCommand()
