"""What the terminal shows: plain text under NO_COLOR, suits in colour otherwise."""

from __future__ import annotations

import io

import pytest

from clients.cli.cards import Style, colour_wanted, group_hand, plural, symbols_wanted
from clients.cli.narrate import narrate
from clients.cli.options import describe
from clients.cli.render import Clock, game_text, hand_line, table_text, turn_status
from clients.cli.replay_table import Step
from clients.cli.tui.replay_model import hand_lines
from services.common.pb.rummy.v1 import table_pb2

from .views import SERVER_NOW_MS, Cards, sample_view

PLAIN = Style(False)


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour_wanted(Tty())
    assert not colour_wanted(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour_wanted(Tty())


class Encoded(io.StringIO):
    def __init__(self, encoding: str) -> None:
        super().__init__()
        self._encoding = encoding

    @property
    def encoding(self) -> str:
        return self._encoding


def test_suit_symbols_only_where_the_terminal_can_show_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RUMMY_ASCII", raising=False)
    assert symbols_wanted(Encoded("utf-8"))
    assert not symbols_wanted(Encoded("ascii"))
    assert not symbols_wanted(Encoded("latin-1"))
    assert not symbols_wanted(Encoded("no-such-encoding"))
    monkeypatch.setenv("RUMMY_ASCII", "1")
    assert not symbols_wanted(Encoded("utf-8"))
    monkeypatch.setenv("RUMMY_ASCII", "0")
    assert symbols_wanted(Encoded("utf-8"))
    assert Style(False, symbols=False).cards(["7S", "TH", "JK"]) == "7S 10H JK"


def test_the_table_in_plain_text_has_no_escape_codes() -> None:
    text = table_text(sample_view(), PLAIN)
    assert "\x1b" not in text
    assert "Round 1 · turn 7 of 120 · cafe" in text
    assert "Alice (you)" in text and "Bob (bot)" in text
    assert "[1] Bob: 7♠ 8♠ JK(9♠) 10♠" in text
    assert "[2] Bob: Q♥ Q♦ JK(Q♠/Q♣)" in text, "a group joker stands for any missing suit"
    assert "[3] Bob: 4♥ 5♥ 6♥" in text
    assert "Discard: 5♦  (9 in the pile)   Stock: 60 cards" in text
    assert "Your hand (5): 7♠ 9♠ 10♠   2♥   JK" in text


def test_one_of_a_thing_is_said_in_the_singular() -> None:
    assert [plural(n, "card") for n in (0, 1, 2)] == ["0 cards", "1 card", "2 cards"]
    assert plural(1, "joker") == "1 joker" and plural(3, "box", "boxes") == "3 boxes"
    view = sample_view()
    view.stock_size = 1
    view.seats[1].card_count = 1
    text = table_text(view, PLAIN)
    assert "Stock: 1 card" in text and "Stock: 1 cards" not in text
    assert " 1 card " in text.splitlines()[2], text  # Bob's row
    hidden = Step(1, table_pb2.TableEvent(seq=1), view, [None, None], "")
    assert hand_lines(hidden, PLAIN)[1] == "  Bob          1 card"
    options = table_pb2.TableOptions(rounds=1, buy_backs=1)
    assert describe(options) == "1 deal, 1 buy-back"


def test_suits_in_colour_red_for_hearts_and_diamonds() -> None:
    colour = Style(True)
    assert colour.card("QH") == "\x1b[31mQ♥\x1b[0m"
    assert colour.card("TD") == "\x1b[31m10♦\x1b[0m"
    assert colour.card("7S") == "7♠"
    assert "\x1b[" in colour.card("JK")
    assert "\x1b[31m" in table_text(sample_view(), colour)


def test_the_hand_is_sorted_and_grouped_by_suit() -> None:
    groups = group_hand(["KD", "JK", "2S", "AS", "9H", "TS", "3C"])
    assert groups == [["AS", "2S", "TS"], ["9H"], ["3C"], ["KD"], ["JK"]]
    deal = Cards()
    assert hand_line(deal.many("KD 2S AS"), PLAIN) == "Your hand (3): A♠ 2♠   K♦"


def test_the_countdown_runs_on_the_servers_clock() -> None:
    local = 5_000.0  # this machine's clock is far behind the server's
    clock = Clock(now=lambda: local)
    view = sample_view(phase=table_pb2.PHASE_DRAW)
    clock.sync(view)
    assert "Your turn ⏱ 30s: draw (d) or take 5♦ (t)" in turn_status(view, clock, PLAIN)
    local += 12.2
    assert "⏱ 18s" in turn_status(view, clock, PLAIN)
    local += 60
    assert "⏱  0s" in turn_status(view, clock, PLAIN)
    theirs = sample_view(phase=table_pb2.PHASE_PLAY, current=1)
    assert turn_status(theirs, clock, PLAIN).startswith("Bob's turn")
    assert clock.offset == pytest.approx(SERVER_NOW_MS / 1000 - 5_000.0)


def test_events_are_told_in_a_sentence() -> None:
    view = sample_view()
    deal = Cards()
    discarded = table_pb2.TableEvent(seq=41, version=13, seat=1)
    discarded.discarded.card.CopyFrom(deal("5D"))
    assert narrate(discarded, view, PLAIN) == "Bob discarded 5♦."
    timed_out = table_pb2.TableEvent(seq=42, version=14, seat=0)
    timed_out.discarded.card.CopyFrom(deal("KS"))
    timed_out.discarded.automatic = True
    assert narrate(timed_out, view, PLAIN) == "Time ran out: K♠ was discarded for you."
    drew = table_pb2.TableEvent(seq=43, version=15, seat=1)
    drew.drew.stock_size = 59
    assert narrate(drew, view, PLAIN) == "Bob drew from the stock."
    bought = table_pb2.TableEvent(seq=44, version=16, seat=1)
    bought.bought_back.total, bought.bought_back.used = 54, 1
    assert narrate(bought, view, PLAIN) == (
        "Bob reached the cap and bought back in at 54 points (buy-back 1)."
    )


def test_the_results_of_a_round_and_of_the_game() -> None:
    view = sample_view()
    ended = table_pb2.TableEvent(seq=50, version=20)
    result = ended.round_ended.result
    result.round, result.winner_seat = 1, 1
    result.end_reason = table_pb2.END_REASON_WENT_OUT
    result.scores.add(seat=0, points=41, total=44)
    result.scores.add(seat=1, points=0, total=0)
    assert narrate(ended, view, PLAIN) == (
        "Round 1 over: Bob went out.\n  Scores: you +41 (total 44), Bob +0 (total 0)"
    )
    game = table_pb2.GameEnded(winner_seat=0, reason=table_pb2.END_REASON_ROUNDS_PLAYED)
    game.totals.add(seat=0, total=3)
    game.totals.add(seat=1, total=9)
    assert game_text(view, game) == (
        "Game over: you win (every round was played).\n  Final totals: you 3, Bob 9"
    )


def test_classic_offers_the_discard_only_when_it_could_be_used() -> None:
    """The server refuses a take `classic` would leave unused (DISCARD_UNUSABLE):
    the prompt does not offer it. KKK, QQQ and four 5s open with the 5♦."""
    clock = Clock()
    view = sample_view(phase=table_pb2.PHASE_DRAW, ruleset="classic", hand="7S TS 2H 9S")
    assert turn_status(view, clock, PLAIN).endswith(": draw (d)")
    view = sample_view(
        phase=table_pb2.PHASE_DRAW, ruleset="classic", hand="5S 5H 5C KS KH KC QS QH QC"
    )
    assert turn_status(view, clock, PLAIN).endswith("draw (d) or take 5♦ (t)")
