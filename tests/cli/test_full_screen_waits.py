"""Waits on the full screen: a server that does not answer, a queue with nobody
else in it, a first run that asks the player's name, and "play again"."""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

from clients.cli.cards import Style
from clients.cli.connection import Connection
from clients.cli.identity import Identity, ProfileError, profile_dir
from clients.cli.matchmaking import QueueChoice
from clients.cli.tui.app import RummyApp
from services.common.pb.rummy.v1 import table_pb2
from tests.game.harness import card, deck_order

from .harness import seat_with_a_bot, servers
from .screen import (
    full_screen,
    journey,
    play_to_the_end,
    press,
    screen_text,
    status_lines,
    until,
    until_screen,
)
from .test_full_screen_moves import HAND

ALONE = QueueChoice(2, "cafe", False, table_pb2.TableOptions(rounds=1))
CLOCK = {"beat_s": 0.1, "clock_stop_s": 1.0}
"""The game server marks every 100 ms that it reached the database; a gap of a
second stops the turns' clock."""
TURN_MS = 8_000


async def test_a_turn_whose_time_ran_out_in_an_outage_counts_down_again(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """The game service is down while the player's turn runs out: their countdown
    reaches 0 s. Back, the service gives the turn its time back (`TurnResumed`),
    and the countdown runs again from it."""
    async with servers(fresh_dsn, bot_delay_ms=600_000, game_settings=CLOCK) as running:
        order = deck_order(2, {0: [card(c) for c in HAND.split()]}, stock=[card("4D")])
        options = table_pb2.TableOptions(turn_timer_ms=TURN_MS)
        await seat_with_a_bot(running, tmp_path, "cafe", order, options=options)
        async with full_screen(running.address, tmp_path, ALONE) as pilot:
            await until_screen(pilot, r"Your turn · [1-8] s: draw a card")
            down = running.restart_game(down_for=TURN_MS / 1000 + 1.0)
            stopped = asyncio.ensure_future(down)
            await until(
                pilot, lambda: "Your turn · 0 s" in status_lines(pilot)[0], "the time to run out"
            )
            await stopped
            await until_screen(pilot, r"could not be reached for \d+ s: your turn goes on")
            assert re.match(r"Your turn · [1-8] s: draw a card", status_lines(pilot)[0]), (
                screen_text(pilot)
            )
            await press(pilot, "d")
            await until_screen(pilot, "You drew 4♦ from the stock")


async def test_a_server_that_does_not_answer_is_said_within_5_s(tmp_path: Path) -> None:
    identity = Identity(tmp_path)
    conn = Connection("127.0.0.1:1", identity.device_id(), "Ana")
    app = RummyApp(journey(conn, identity, ALONE), Style(False))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            started = time.monotonic()
            await until_screen(pilot, r"No answer from the server at 127\.0\.0\.1:1", timeout=5.0)
            assert time.monotonic() - started < 5.0
            assert "Is `make run` going?" in screen_text(pilot)
            await until_screen(pilot, r"Trying again in \d s · q gives up")
            await press(pilot, "q")
            await until(pilot, lambda: app.return_value is not None, "the app to stop")
        assert app.return_value == 130
    finally:
        await conn.close()


async def test_queueing_alone_offers_bots(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        identity = Identity(tmp_path)
        conn = Connection(running.address, identity.device_id(), "Ana")
        trip = replace(journey(conn, identity, ALONE), bots_offer_after_s=0.5)
        app = RummyApp(trip, Style(False))
        try:
            async with app.run_test(size=(80, 24)) as pilot:
                await until_screen(pilot, r"Looking for a 2-player cafe table")
                await until_screen(pilot, "Press b to fill the table with bots now")
                await press(pilot, "b")
                await until_screen(pilot, r"Your hand: \d+ cards")
                assert "(bot)" in screen_text(pilot)
        finally:
            await conn.close()


async def test_a_first_run_asks_the_name_and_a_game_over_offers_another(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        identity = Identity(tmp_path)
        conn = Connection(running.address, identity.device_id(), identity.display_name(None))
        # A short game (a turn cap ends it): what is tested is what comes after.
        short = table_pb2.TableOptions(rounds=1, turn_cap=6)
        choice = replace(ALONE, bots=True, options=short)
        app = RummyApp(journey(conn, identity, choice, ask_name=True), Style(False))
        try:
            async with app.run_test(size=(80, 24)) as pilot:
                await until_screen(pilot, "Your name at the table")
                await press(pilot, "ctrl+u", *"Zoé", "enter")
                await until_screen(pilot, r"Zoé \(you\)")
                assert Identity(tmp_path).remembered_name() == "Zoé"
                final = await play_to_the_end(pilot)
                assert "p play again" in final
                first = conn.player_id
                await press(pilot, "p")
                await until_screen(pilot, r"Round 1 · turn \d+/6 · cafe")
                assert "Game over" not in screen_text(pilot)
                assert conn.player_id == first
        finally:
            await conn.close()


async def test_two_profiles_on_one_machine_sit_at_one_table(
    fresh_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, both shared one device id: the second queue ended the first one's ticket."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    ana, bob = Identity(profile_dir("ana")), Identity(profile_dir("bob"))
    assert ana.device_id() != bob.device_id()
    assert ana.folder == tmp_path / "rummy" / "profiles" / "ana"
    with pytest.raises(ProfileError):
        profile_dir("../elsewhere")
    people = replace(ALONE, bots=False)
    async with (
        servers(fresh_dsn) as running,
        full_screen(running.address, ana.folder, people, name="Ana") as first,
        full_screen(running.address, bob.folder, people, name="Bob") as second,
    ):
        await until_screen(first, r"Bob\s+\d+c")
        await until_screen(second, r"Ana\s+\d+c")
        assert "Ana (you)" in screen_text(first) and "Bob (you)" in screen_text(second)
        assert "(bot)" not in screen_text(first)


async def test_an_opponent_who_drops_is_shown_away_then_back(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, a player who dropped was invisible until their turn timed out."""
    people = replace(ALONE, bots=False)
    async with (
        servers(fresh_dsn) as running,
        full_screen(running.address, tmp_path / "ana", people, name="Ana") as ana,
    ):
        async with full_screen(running.address, tmp_path / "bob", people, name="Bob") as bob:
            await until_screen(ana, r"Bob\s+\d+c")
            await until_screen(bob, r"Ana\s+\d+c")
            await until(ana, lambda: "away" not in screen_text(ana), "Bob shown there")
        # Bob's client is gone (his seat is kept): told once the drop has lasted.
        await until_screen(ana, "Bob lost the connection", timeout=20)
        await until_screen(ana, r"Bob\s+\d+c\s+-?\d+.*away")
        async with full_screen(running.address, tmp_path / "bob", people, name="Bob") as bob:
            await until_screen(bob, r"Ana\s+\d+c")
            await until_screen(ana, "Bob is back at the table", timeout=20)
            await until(ana, lambda: "away" not in screen_text(ana), "Bob shown back")
