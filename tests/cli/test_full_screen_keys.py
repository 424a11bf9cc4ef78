"""Keys and clicks on a frozen table: what the screen picks and would send."""

from __future__ import annotations

import io
from typing import Any, cast

import pytest
from textual.pilot import Pilot

from clients.cli.cards import Style, colour_wanted
from clients.cli.tui.table_screen import TableScreen
from services.common.pb.rummy.v1 import game_pb2, table_pb2

from .screen import assert_unwrapped, press, screen_lines, screen_text, status_lines, until
from .tables import NOW_MS, Frozen, FrozenTable, at, cafe_midgame, contract_claim, long_melds

SUITS = "♠♥♦♣"


def screen_of(pilot: Pilot[str]) -> TableScreen:
    screen = next(s for s in pilot.app.screen_stack if isinstance(s, TableScreen))
    return screen


def session_of(pilot: Pilot[str]) -> Frozen:
    return cast(Frozen, screen_of(pilot).session)


def codes(pilot: Pilot[str], ids: list[int]) -> list[str]:
    held = {c.id: c.code for c in screen_of(pilot).session.view.hand}
    return [held[i] for i in ids]


async def test_two_digits_pick_the_twelfth_card() -> None:
    async with FrozenTable(cafe_midgame()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(pilot.app.screen, TableScreen), "the table")
        screen_of(pilot).digit_wait_s = 30.0  # however slow the keys come

        def picked() -> list[str]:
            return codes(pilot, screen_of(pilot).selection.picked)

        await press(pilot, "1", "2")
        await until(pilot, lambda: picked() == ["JK"], "the twelfth card")
        await press(pilot, "1")
        await pilot.pause(0.2)
        assert picked() == ["JK"]  # 1, or 10 to 12? not yet told
        await press(pilot, "f")  # a key that is no digit: position 1 it is
        await until(pilot, lambda: picked() == ["JK", "3S"], "the first card")
        await press(pilot, "escape")
        assert screen_of(pilot).selection.picked == []


async def test_a_click_picks_a_card_and_a_click_on_a_meld_lays_it_off() -> None:
    async with FrozenTable(cafe_midgame()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(pilot.app.screen, TableScreen), "the table")
        await pilot.click("#hand", offset=(2 + 4, 1))  # the second card: 4♠
        assert codes(pilot, screen_of(pilot).selection.picked) == ["4S"]
        await pilot.click("#hand", offset=(2 + 4, 1))
        assert screen_of(pilot).selection.picked == []
        await press(pilot, "3")  # 9♠ (no position 30 and up: at once)
        meld = next(w for w in pilot.app.screen.query(".meld") if getattr(w, "meld_id", 0) == 3)
        await pilot.click(meld)
        await until(pilot, lambda: session_of(pilot).sent, "the lay-off")
        sent = session_of(pilot).sent[0]
        assert sent.method == "LayOff"
        message = cast(game_pb2.LayOffRequest, sent.message)
        assert message.meld_id == 3 and codes(pilot, list(message.card_ids)) == ["9S"]


async def test_a_typed_move_still_works() -> None:
    async with FrozenTable(cafe_midgame()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(pilot.app.screen, TableScreen), "the table")
        await press(pilot, "colon")
        await until(pilot, lambda: "Type a move" in screen_text(pilot), "the question")
        await press(pilot, *"x kd", "enter")
        await until(pilot, lambda: session_of(pilot).sent, "the discard")
        sent = session_of(pilot).sent[0]
        assert sent.method == "Discard"
        card = cast(game_pb2.DiscardRequest, sent.message).card_id
        assert codes(pilot, [card]) == ["KD"]


async def test_cards_that_make_no_meld_are_said_so_and_nothing_is_sent() -> None:
    async with FrozenTable(cafe_midgame()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(pilot.app.screen, TableScreen), "the table")
        await press(pilot, "1", "f", "2")  # 3♠ 4♠: two cards
        assert codes(pilot, screen_of(pilot).selection.picked) == ["3S", "4S"]
        await press(pilot, "m")
        await until(pilot, lambda: "Not a meld" in screen_text(pilot), "the sentence")
        assert "Not a meld" in screen_text(pilot).splitlines()[-1]
        assert session_of(pilot).sent == []


async def test_every_seat_fits_its_row_at_80_columns() -> None:
    """Four players with every note (`opened away`) and the piles: no row wraps."""
    async with FrozenTable(cafe_midgame()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "opened away" in screen_text(pilot), "the table")
        assert_unwrapped(pilot)


async def test_a_long_meld_goes_on_under_its_first_card() -> None:
    """A whole suit in one run at 80 columns: the cards that do not fit go on the
    next row under the first card, never split; at 120 columns, one row each."""
    async with FrozenTable(long_melds()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "[3] you: Q♠" in screen_text(pilot), "the melds")
        lines = screen_text(pilot).splitlines()
        first = next(i for i, line in enumerate(lines) if "[1] Bob: A♥ 2♥" in line)
        assert lines[first].index("A♥") == lines[first + 1].index("10♥ J♥ Q♥ K♥"), lines
        assert "[2] Chloé: 2♣ 3♣ JK(4♣)" in lines[first + 2]
        assert lines[first + 2].index("2♣") == lines[first + 3].index("9♣ 10♣"), lines
        assert_unwrapped(pilot)
        await pilot.resize_terminal(120, 40)
        await until(pilot, lambda: "9♥ 10♥ J♥ Q♥ K♥" in screen_text(pilot), "one row")
        assert_unwrapped(pilot)


async def test_a_pane_of_long_melds_scrolls_each_meld_in_one_piece() -> None:
    view = long_melds()
    for number in range(4, 8):
        view.melds.append(table_pb2.MeldView(id=number, owner_seat=1, cards=view.melds[0].cards))
    async with FrozenTable(view).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "[7] Bob: A♥" in screen_text(pilot), "the last meld")
        assert "[1] Bob" not in screen_text(pilot)  # scrolled away, the last one shown
        assert_unwrapped(pilot)


async def test_a_turn_given_its_time_back_shows_the_new_countdown() -> None:
    """After an outage the server gives the turn its time back (`TurnResumed`): the
    countdown follows the new deadline at once, without waiting for a new view."""
    async with FrozenTable(cafe_midgame()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "Your turn · 32 s" in status_lines(pilot)[0], "the turn")
        resumed = table_pb2.TableEvent(seq=141, version=58, seat=0)
        resumed.turn_resumed.turn = 23
        resumed.turn_resumed.deadline.CopyFrom(at(NOW_MS + 45_000))
        resumed.turn_resumed.stopped_for.FromMilliseconds(70_000)
        session_of(pilot).on_event(resumed)
        await until(pilot, lambda: "Your turn · 45 s" in status_lines(pilot)[0], "the new time")
        assert "could not be reached for 70 s: your turn goes on" in screen_text(pilot)
        # A resume of another turn (the view is behind) leaves the countdown alone.
        resumed.turn_resumed.turn = 24
        resumed.turn_resumed.deadline.CopyFrom(at(NOW_MS + 5_000))
        session_of(pilot).on_event(resumed)
        await pilot.pause(0.6)
        assert "Your turn · 45 s" in status_lines(pilot)[0]


async def test_a_claim_window_given_its_time_back_shows_the_new_countdown() -> None:
    async with FrozenTable(contract_claim()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "2 s to claim" in status_lines(pilot)[0], "the offer")
        resumed = table_pb2.TableEvent(seq=78, version=32, seat=0)
        resumed.turn_resumed.turn = 8
        resumed.turn_resumed.deadline.CopyFrom(at(NOW_MS + 50_000))
        resumed.turn_resumed.claim_deadline.CopyFrom(at(NOW_MS + 9_000))
        session_of(pilot).on_event(resumed)
        await until(pilot, lambda: "9 s to claim" in status_lines(pilot)[0], "the new window")
        assert "Bob's turn · 50 s" in status_lines(pilot)[0]


async def test_leaving_asks_first() -> None:
    async with FrozenTable(cafe_midgame()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: isinstance(pilot.app.screen, TableScreen), "the table")
        session = session_of(pilot)
        await press(pilot, "q")
        await until(pilot, lambda: "Leave this table for good?" in screen_text(pilot), "the ask")
        await press(pilot, "n")
        await until(pilot, lambda: isinstance(pilot.app.screen, TableScreen), "the table back")
        assert session.sent == []
        await press(pilot, "q")
        await until(pilot, lambda: "Leave this table for good?" in screen_text(pilot), "the ask")
        await press(pilot, "y")
        await until(pilot, lambda: session.sent, "the leave")
        assert [r.method for r in session.sent] == ["Leave"]


async def test_a_resize_redraws_the_table() -> None:
    """From 80×24 to 120×40 and back: every line as wide as the terminal, the log
    growing on the tall screen, and nothing of the table lost."""
    async with FrozenTable(cafe_midgame()).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "opened away" in screen_text(pilot), "the table")
        await pilot.resize_terminal(120, 40)
        await until(pilot, lambda: len(screen_text(pilot).splitlines()) == 40, "the redraw")
        assert screen_of(pilot).has_class("-tall")
        lines = screen_text(pilot).splitlines()
        assert all(len(line) == 120 for line in lines)
        assert "[3] Dan: 2♦ 3♦ 4♦" in screen_text(pilot) and "Your hand: 12 cards" in lines[-6]
        await pilot.resize_terminal(80, 24)
        await until(pilot, lambda: len(screen_text(pilot).splitlines()) == 24, "the redraw")
        assert not screen_of(pilot).has_class("-tall")
        assert_unwrapped(pilot)


async def test_letters_for_suits_everywhere_on_the_table() -> None:
    """Where the terminal cannot show ♠♥♦♣: the table, the meld to pick, and the
    sentences of a move that cannot be sent all name cards with letters."""
    letters = Style(False, symbols=False)
    async with FrozenTable(cafe_midgame(), style=letters).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "opened away" in screen_text(pilot), "the table")
        assert "[3] Dan: 2D 3D 4D" in screen_text(pilot) and "JK(9S)" in screen_text(pilot)
        assert not set(SUITS) & set(screen_text(pilot)), screen_text(pilot)
        await press(pilot, "colon")
        await until(pilot, lambda: "Type a move" in screen_text(pilot), "the question")
        await press(pilot, *"x 9c", "enter")
        await until(pilot, lambda: "You have no 9C" in status_lines(pilot)[1], "the sentence")
        await press(pilot, "2", "s")  # 4S for the joker of [1], which stands for 9S
        await until(pilot, lambda: "Take the joker of which meld" in screen_text(pilot), "ask")
        assert not set(SUITS) & set(screen_text(pilot)), screen_text(pilot)
        await press(pilot, "1")
        await until(pilot, lambda: "stands for 9S, not 4S" in status_lines(pilot)[1], "why not")
        assert not set(SUITS) & set(screen_text(pilot)), screen_text(pilot)
        assert session_of(pilot).sent == []


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def hues(pilot: Pilot[Any]) -> set[str]:
    """The colours on screen that are not a grey, as the terminal is sent them
    (after the app's own filters, such as NO_COLOR's)."""
    app = pilot.app
    background = app.screen.styles.background
    found = set()
    for strip in app.screen._compositor.render_strips():
        for line_filter in app.get_line_filters():
            strip = strip.apply_filter(line_filter, background)
        for segment in strip:
            style = segment.style
            for colour in (style.color, style.bgcolor) if style is not None else ():
                if colour is not None and not colour.is_default:
                    red, green, blue = colour.get_truecolor()
                    if not red == green == blue:
                        found.add(colour.name)
    return found


@pytest.mark.parametrize("no_color", ["", "1"])
async def test_no_colour_on_the_table_with_no_color(
    monkeypatch: pytest.MonkeyPatch, no_color: str
) -> None:
    """On a terminal the suits are red and the boxes coloured; NO_COLOR takes every
    colour away: the cards' and the screen's."""
    monkeypatch.setenv("NO_COLOR", no_color)
    if not no_color:
        monkeypatch.delenv("NO_COLOR")
    style = Style(colour_wanted(Tty()))
    async with FrozenTable(cafe_midgame(), style=style).run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "opened away" in screen_text(pilot), "the table")
        assert len(screen_lines(pilot)) == 24
        if no_color:
            assert hues(pilot) == set()
        else:
            assert hues(pilot), "a terminal without NO_COLOR shows colours"
