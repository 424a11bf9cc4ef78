"""The full-screen client in the test's own event loop, against real servers,
driven with keys and read back as the text a person sees on the screen."""

from __future__ import annotations

import asyncio
import re
import time
import unicodedata
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from textual import events
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.pilot import Pilot

from clients.cli import waiting
from clients.cli.cards import Style
from clients.cli.connection import Connection
from clients.cli.identity import Identity
from clients.cli.matchmaking import QueueChoice
from clients.cli.play import Seek
from clients.cli.tui.app import Journey, RummyApp
from clients.cli.tui.dialogs import Notice
from clients.cli.tui.table_screen import TableScreen
from services.common.pb.rummy.v1 import table_pb2

SMALL = (80, 24)
LARGE = (120, 40)
WAIT_S = 30.0
PLAIN = Style(False)


async def press(pilot: Pilot[Any], *keys: str) -> None:
    """Keys as a terminal sends them. (`Pilot.press` also waits until the process
    looks idle, which it never does with the servers in it: a second a key.)"""
    app = pilot.app
    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        original = REPLACED_KEYS.get(name, name)
        try:
            character: str | None = unicodedata.lookup(_get_unicode_name_from_key(original))
        except KeyError:
            character = name if len(name) == 1 else None
        event = events.Key(name, character)
        event.set_sender(app)
        assert app._driver is not None
        app._driver.send_message(event)
        await pilot._wait_for_screen()
        await asyncio.sleep(0.01)


def screen_lines(pilot: Pilot[Any]) -> list[str]:
    """The top screen's text, line by line, as drawn."""
    strips = pilot.app.screen._compositor.render_strips()
    return [strip.text for strip in strips]


def screen_text(pilot: Pilot[Any]) -> str:
    return "\n".join(screen_lines(pilot))


async def until(
    pilot: Pilot[Any], check: Callable[[], object], what: str, timeout: float = WAIT_S
) -> object:
    """Wait, letting the app run, until ``check()`` is truthy; fail saying ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; screen:\n{screen_text(pilot)}")
        await pilot.pause(0.05)


async def until_screen(pilot: Pilot[Any], pattern: str, timeout: float = WAIT_S) -> re.Match[str]:
    """Wait until the screen shows ``pattern`` (a regular expression)."""
    found = await until(
        pilot, lambda: re.search(pattern, screen_text(pilot)), f"/{pattern}/", timeout
    )
    assert isinstance(found, re.Match)
    return found


def journey(
    conn: Connection,
    identity: Identity,
    choice: QueueChoice,
    *,
    ask_name: bool = False,
) -> Journey:
    """`rummy play` with this choice (bots offered after a wait unless asked for)."""
    seek = Seek(lambda c, i, say: waiting.queue(c, i, choice, say))
    with_bots = None
    if not choice.bots:
        bots = QueueChoice(choice.players, choice.ruleset, True, choice.options)
        with_bots = Seek(lambda c, i, say: waiting.queue(c, i, bots, say))
    return Journey(conn, identity, seek, with_bots=with_bots, ask_name=ask_name)


@asynccontextmanager
async def full_screen(
    server: str,
    config_dir: Path,
    choice: QueueChoice,
    *,
    name: str = "Ana",
    size: tuple[int, int] = SMALL,
    ask_name: bool = False,
) -> AsyncIterator[Pilot[Any]]:
    """The app for the device kept in ``config_dir``, in a terminal of ``size``."""
    identity = Identity(config_dir)
    conn = Connection(server, identity.device_id(), identity.display_name(name))
    app = RummyApp(journey(conn, identity, choice, ask_name=ask_name), PLAIN)
    try:
        async with app.run_test(size=size) as pilot:
            yield pilot
    finally:
        await conn.close()


SEAT_ROW = re.compile(r"(▶ |  )\S.{12} +\d+c +-?\d+( [a-z ]+)?")
PILES = re.compile(r"Stock \d+ · Discard \S+ \(\d+\)")


MELD_HEAD = re.compile(r"(\[\d+\] )[^:]*: \S")
MELDS_BOX = "╭─ Table melds"


def assert_unwrapped(pilot: Pilot[Any]) -> None:
    """Nothing on the table wrapped: each line of the players' box is a seat's row
    or the piles, each row of the melds' pane starts with a meld's number or goes
    on under its first card, and neither status line is cut short."""
    screen = table_screen(pilot)
    if screen is None or pilot.app.screen is not screen:
        return
    lines = screen_lines(pilot)
    if len(lines) < 24:
        return
    shown = "\n".join(lines)
    box = [line[2:38].rstrip() for line in lines[2:]]
    box = box[: next(i for i, line in enumerate(lines[2:]) if line.startswith("╰"))]
    rows = [line for line in box if line]
    assert all(SEAT_ROW.fullmatch(r) or PILES.fullmatch(r) for r in rows), shown
    assert_melds_unwrapped(lines)
    assert not any(line.rstrip().endswith("…") for line in lines[-2:]), shown


def assert_melds_unwrapped(lines: list[str]) -> None:
    """Each row of the melds' pane is a meld's first (`[3] Bob: 7♠ …`) or the rest of
    one, indented to its first card (or past its number, when the owner's name is
    long); a pane scrolled down may begin with the rest of a meld."""
    left = lines[1].find(MELDS_BOX)
    if left < 0:
        return
    right = lines[1].rindex("╮")
    indents: set[int] | None = None  # before any meld's first row: any indent
    for line in lines[2:]:
        if line[left] == "╰":
            return
        row = line[left + 2 : right - 1].rstrip(" ▁▂▃▄▅▆▇█▉▊▋▌▍▎▏")
        if not row or row == "No melds on the table yet.":
            continue
        head = MELD_HEAD.match(row)
        if head is not None:
            indents = {len(head.group(1)), head.end() - 1}
            continue
        indent = len(row) - len(row.lstrip(" "))
        fits = indent >= 4 if indents is None else indent in indents
        assert fits, f"a meld wrapped without its indent: {row!r}\n" + "\n".join(lines)


def table_screen(pilot: Pilot[Any]) -> TableScreen | None:
    for screen in reversed(pilot.app.screen_stack):
        if isinstance(screen, TableScreen):
            return screen
    return None


def view_of(pilot: Pilot[Any]) -> table_pb2.TableView:
    screen = table_screen(pilot)
    assert screen is not None, screen_text(pilot)
    return screen.session.view


def status_lines(pilot: Pilot[Any]) -> tuple[str, str]:
    lines = screen_lines(pilot)
    if len(lines) < 2:  # not drawn yet
        return "", ""
    return lines[-2].strip(), lines[-1].strip()


def notice_shown(pilot: Pilot[Any]) -> Notice | None:
    screen = pilot.app.screen
    return screen if isinstance(screen, Notice) else None


async def play_a_turn(pilot: Pilot[Any]) -> None:
    """One turn the way a beginner plays it with keys: draw, lay what the hint
    shows when it can, discard the card under the cursor (the next one when a
    card may not be discarded)."""
    await press(pilot, "d")
    await until(
        pilot, lambda: "d draw" not in status_lines(pilot)[1] or not my_turn(pilot), "drawn"
    )
    if "m meld" in status_lines(pilot)[1]:
        await press(pilot, "h")
        await until(pilot, lambda: "Hint" in status_lines(pilot)[1], "a hint")
        await press(pilot, "m")
        await pilot.pause(0.3)
        await press(pilot, "escape")
    if my_turn(pilot) and "x discard" not in status_lines(pilot)[1]:
        await lay_off_something(pilot)  # no card may be discarded (two jokers, say)
    await discard_something(pilot)


async def lay_off_something(pilot: Pilot[Any]) -> None:
    """Lay a card off with keys: pick it, press l, take the first meld offered,
    then the next ones, until one takes it."""
    screen = table_screen(pilot)
    assert screen is not None
    for position in range(1, len(view_of(pilot).hand) + 1):
        for meld in range(len(view_of(pilot).melds)):
            if "l lay off" not in status_lines(pilot)[1]:
                return
            before = view_of(pilot).version
            screen.digit_wait_s = 30.0
            await press(pilot, "escape")  # no card picked yet
            await until(pilot, lambda: not screen.selection.picked, "the picks cleared")
            await press(pilot, *str(position), "f", "l")
            await until(pilot, lambda: "Lay off on which meld" in screen_text(pilot), "the melds")
            await press(pilot, *(["down"] * meld), "enter")
            await until(pilot, lambda v=before: answered(pilot, v), "the lay-off's answer")
            if view_of(pilot).version != before:
                return
            await press(pilot, "escape")


async def discard_something(pilot: Pilot[Any]) -> None:
    """Discard the card under the cursor, or the next one while a card is refused."""
    for _ in range(20):
        if not my_turn(pilot) or "x discard" not in status_lines(pilot)[1]:
            return
        before = view_of(pilot).version
        await press(pilot, "x")
        await until(pilot, lambda v=before: answered(pilot, v), "the discard's answer")
        if view_of(pilot).version != before:
            return
        await press(pilot, "right")


def answered(pilot: Pilot[Any], version: int) -> bool:
    """The move sent at ``version`` was made, or refused."""
    return view_of(pilot).version != version or "Refused" in status_lines(pilot)[1]


def my_turn(pilot: Pilot[Any]) -> bool:
    screen = table_screen(pilot)
    return (
        screen is not None
        and pilot.app.screen is screen
        and status_lines(pilot)[0].startswith("Your turn")
    )


ROUND_OVER = re.compile(r"Round (\d+) over")
DECK_VERIFIED = "Round {}: deck verified, it was fixed before the first card."


async def round_result_shown(pilot: Pilot[Any], round_no: int) -> dict[str, int]:
    """A round's end on screen: every seat by name with its points, its total and
    the cards it was left with (or none), then the deck's check. Each seat's total."""
    await until_screen(pilot, "Enter back to the table")
    text = screen_text(pilot)
    view = view_of(pilot)
    totals = {}
    for seat in view.seats:
        name = (
            "you" if view.HasField("my_seat") and seat.seat == view.my_seat else seat.display_name
        )
        row = re.search(
            rf"\b{re.escape(name)} +[+-] *\d+  total (-?\d+) +(no card left|\S[^(]*\(\d+\))",
            text,
        )
        assert row is not None, f"no result for {name}:\n{text}"
        totals[name] = int(row.group(1))
    assert DECK_VERIFIED.format(round_no) in text, text
    return totals


def final_totals(text: str) -> dict[str, int]:
    """`Final totals: you 3, Bot 1 9` as {name: total}."""
    found = re.search(r"Final totals: ([^\n█]*)", text)
    assert found is not None, text
    pairs = (part.strip().rpartition(" ") for part in found.group(1).strip().split(", "))
    return {name: int(total) for name, _, total in pairs}


async def play_to_the_end(pilot: Pilot[Any], *, within: float = 240.0) -> str:
    """Play every turn with keys until the game-over screen; its text. Each round's
    result is read on its way, and the last one's totals are the game's."""
    deadline = time.monotonic() + within
    totals: dict[str, int] = {}
    while time.monotonic() < deadline:
        notice = notice_shown(pilot)
        if notice is not None:
            if notice.title_text == "Game over":
                await until_screen(pilot, "Final totals")
                final = screen_text(pilot)
                assert totals, "the game ended with no round's result shown"
                assert final_totals(final) == totals, final
                return final
            ended = ROUND_OVER.fullmatch(notice.title_text)
            if ended is not None:
                totals = await round_result_shown(pilot, int(ended.group(1)))
            await press(pilot, "enter")
            continue
        if my_turn(pilot) and "Refused" in status_lines(pilot)[1]:
            await press(pilot, "escape")  # read; the moves legal now are listed again
            continue
        if my_turn(pilot) and "d draw" in status_lines(pilot)[1]:
            assert_unwrapped(pilot)
            await play_a_turn(pilot)
            continue
        if my_turn(pilot) and "x discard" in status_lines(pilot)[1]:
            await discard_something(pilot)  # a turn whose discard was refused
            continue
        await pilot.pause(0.05)
    raise AssertionError(f"no end after {within} s:\n{screen_text(pilot)}")
