"""Moves on the full-screen table, with keys, on tables dealt from a known deck:
a refusal, a joker swap, a contract claim, and a game server restarting under
the player. Each is read back from the screen."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from textual.pilot import Pilot

from clients.cli.cards import Style
from clients.cli.connection import Connection
from clients.cli.identity import Identity
from clients.cli.matchmaking import QueueChoice
from clients.cli.tui.app import RummyApp
from clients.cli.tui.model import sorted_hand
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import Discard, DrawStock
from services.game.rules.ruleset import CONTRACT, RAMI51
from tests.game.harness import LONG_TURNS_MS, Player, card, deck_order
from tests.rules.helpers import deck_order as scripted_order
from tests.rules.test_claims import HANDS

from .harness import seat_with_a_bot, servers, sign_in
from .screen import (
    full_screen,
    journey,
    press,
    screen_text,
    status_lines,
    table_screen,
    until,
    until_screen,
    view_of,
)
from .test_new_secret import NEW_SECRET
from .test_reposer import BOT, SAM

HAND = "QH QD QC JK QS 2C 3C 7S 8S 9S 4C 5H KD"
"""Sam's deal at the cafe table (see tests/cli/test_swap.py): a joker to play with."""
QUEUE = QueueChoice(2, "cafe", True)


def positions(pilot: Pilot[int], *codes: str) -> list[str]:
    """The position keys of these cards in the hand as shown (first copies first)."""
    shown = sorted_hand(view_of(pilot).hand)
    keys, used = [], set()
    for code in codes:
        found = next(c for c in shown if c.code == code and c.id not in used)
        used.add(found.id)
        keys.append(str(found.position))
    return keys


async def pick(pilot: Pilot[int], *codes: str) -> None:
    """Pick cards by typing their position numbers, as shown under the cards; a key
    that is no digit (an unbound one here) ends each number, however slow the keys."""
    screen = table_screen(pilot)
    assert screen is not None
    screen.digit_wait_s = 30.0
    for key in positions(pilot, *codes):
        await press(pilot, *key, "f")


async def test_a_refusal_shows_its_sentence_and_changes_nothing(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        order = deck_order(2, {0: [card(c) for c in HAND.split()]}, stock=[card("4D")])
        await seat_with_a_bot(running, tmp_path, "cafe", order)
        async with full_screen(running.address, tmp_path, QUEUE) as pilot:
            await until_screen(pilot, r"Your turn · \d+ s: draw a card")
            before = screen_text(pilot).splitlines()[:-2]
            await press(pilot, "x")  # a discard before the draw
            await until(pilot, lambda: "Refused" in status_lines(pilot)[1], "the refusal")
            assert status_lines(pilot)[1].startswith("Refused: Draw a card first")
            assert status_lines(pilot)[1].endswith("[MUST_DRAW_FIRST]")
            assert screen_text(pilot).splitlines()[:-2] == before
            # The next key clears it; the moves legal now are listed again.
            await press(pilot, "right")
            await press(pilot, "d")
            await until_screen(pilot, "You drew 4♦ from the stock")
            await until(pilot, lambda: "x discard" in status_lines(pilot)[1], "the next moves")


async def test_the_discard_taken_is_put_back_with_r(fresh_dsn: str, tmp_path: Path) -> None:
    """`rami51`'s Reposer: t takes the 6♣, r puts it back; then only the draw is
    offered, and the turn goes on from the stock."""
    async with servers(fresh_dsn, bot_delay_ms=600_000) as running:
        order = scripted_order([SAM, BOT], discard="6C", stock="KH", ruleset=RAMI51)
        await seat_with_a_bot(running, tmp_path, "rami51", order)
        async with full_screen(running.address, tmp_path, QueueChoice(2, "rami51", True)) as pilot:
            await until_screen(pilot, r"Your turn · \d+ s: draw a card")
            assert "t take" in status_lines(pilot)[1] and "r put back" not in status_lines(pilot)[1]
            await press(pilot, "t")
            await until_screen(pilot, "Your hand: 14 cards")
            await until(pilot, lambda: "r put back" in status_lines(pilot)[1], "r offered")
            await press(pilot, "r")
            await until_screen(pilot, "Your hand: 13 cards")
            await until_screen(pilot, r"Stock \d+ · Discard 6♣ \(1\)")
            await until(pilot, lambda: "d draw" in status_lines(pilot)[1], "the draw offered")
            assert "t take" not in status_lines(pilot)[1], "the card put back is not offered"
            await press(pilot, "d")
            await until_screen(pilot, "You drew K♥")


async def test_a_joker_swap_with_keys(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        order = deck_order(2, {0: [card(c) for c in HAND.split()]}, stock=[card("4D")])
        await seat_with_a_bot(running, tmp_path, "cafe", order)
        async with full_screen(running.address, tmp_path, QUEUE) as pilot:
            await until_screen(pilot, r"Your turn · \d+ s: draw a card")
            await press(pilot, "d")
            await until_screen(pilot, "You drew 4♦")
            await until_screen(pilot, "Your hand: 14 cards")  # the answer's view, drawn
            await pick(pilot, "QH", "QD", "QC", "JK")
            await press(pilot, "m")
            await until_screen(pilot, r"\[1\] you: Q♥ Q♦ Q♣ JK\(Q♠\)")
            await pick(pilot, "QS")
            await press(pilot, "s")
            await until_screen(pilot, "Take the joker of which meld")
            await press(pilot, "1")
            await until_screen(pilot, "Where does the joker go")
            assert "a new meld: 2♣ 3♣" in screen_text(pilot) or "a new meld: JK" in screen_text(
                pilot
            )
            await press(pilot, "enter")  # the first answer: the new meld
            await until_screen(pilot, r"\[2\] you: (2♣ 3♣ (4♣ )?JK|JK 2♣ 3♣)")
            await until_screen(pilot, r"took the joker from \[1\]")
            await until_screen(pilot, r"\[1\] you: Q♥ Q♦ Q♣ Q♠")


async def test_a_contract_claim_with_keys(fresh_dsn: str, tmp_path: Path) -> None:
    """Pia passes over the card turned up: c claims it. The player's own discard is
    on offer to the others only: no c then, and the status bar says so."""
    async with servers(fresh_dsn) as running:
        pia = await sign_in(running, "device-cli-test-pia2", "Pia")
        order = scripted_order(HANDS[:2], "QD", "KS KH KD", ruleset=CONTRACT)
        options = table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS, claim_window_ms=60_000)
        table_id = await seat_with_a_bot(
            running, tmp_path, "contract", order, opponent=pia, options=options, opponent_first=True
        )
        async with (
            grpc.aio.insecure_channel(running.game_address) as channel,
            full_screen(running.address, tmp_path, QUEUE) as pilot,
        ):
            other = Player(channel, pia.token, pia.player_id, "Pia")
            await until_screen(pilot, r"Pia's turn · \d+ s")
            assert "contract: 2 groups" in screen_text(pilot).splitlines()[0]
            await other.send(table_id, DrawStock())
            await until_screen(pilot, r"Pia's turn · \d+ s · Q♦ on offer, \d+ s to claim")
            await until(pilot, lambda: status_lines(pilot)[1].startswith("c claim"), "c")
            await press(pilot, "c")
            await until_screen(pilot, "You claimed the Q♦")
            await until_screen(pilot, r"· you claimed Q♦")
            await other.send(table_id, Discard(CONTRACT.deck.ids_of("AS")[0]))
            await until_screen(pilot, "You got the Q♦ and drew a penalty card: K♥.")
            await until_screen(pilot, "Your hand: 12 cards")
            await press(pilot, "d")
            await until_screen(pilot, "You drew K♦")
            await until_screen(pilot, "Your hand: 13 cards")
            await pick(pilot, "9C")
            await press(pilot, "x")
            await until_screen(pilot, "You discarded 9♣")
            await other.send(table_id, DrawStock())
            await until_screen(pilot, r"· your 9♣ is on offer to the others")
            assert not status_lines(pilot)[1].startswith("c claim")


@pytest.mark.parametrize("whole", [False, True], ids=["game-server", "make-run-new-secret"])
async def test_a_restart_leaves_the_player_at_the_table(
    fresh_dsn: str, tmp_path: Path, whole: bool
) -> None:
    """The game server restarts; or the whole backend, signing tokens with a new
    secret (the client's token is refused: it signs in again and stays)."""
    async with servers(fresh_dsn) as running:
        order = deck_order(2, {0: [card(c) for c in HAND.split()]}, stock=[card("4D")])
        table_id = await seat_with_a_bot(running, tmp_path, "cafe", order)
        async with full_screen(running.address, tmp_path, QUEUE) as pilot:
            await until_screen(pilot, r"Your turn · \d+ s: draw a card")
            if whole:
                await running.restart_everything(NEW_SECRET)
            else:
                await running.restart_game()
            # The table stays on screen; a move after the restart is made and shown.
            await press(pilot, "d")
            await until_screen(pilot, "You drew 4♦ from the stock", timeout=60)
            await until_screen(pilot, "Your hand: 14 cards")
            assert view_of(pilot).table_id == table_id
            await pick(pilot, "KD")
            await press(pilot, "x")
            await until_screen(pilot, "You discarded K♦")
            await until_screen(pilot, r"Bot's turn|Your turn")


async def test_a_spectator_follows_the_table_full_screen(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        order = deck_order(2, {0: [card(c) for c in HAND.split()]}, stock=[card("4D")])
        table_id = await seat_with_a_bot(running, tmp_path / "sam", "cafe", order)
        identity = Identity(tmp_path / "eve")
        conn = Connection(running.address, identity.device_id(), "Eve")
        conn.use_game(running.game_address)
        trip = replace(journey(conn, identity, QUEUE), watching=table_id)
        app = RummyApp(trip, Style(False))
        try:
            async with (
                app.run_test(size=(80, 24)) as pilot,
                full_screen(running.address, tmp_path / "sam", QUEUE) as sam,
            ):
                await until_screen(pilot, "Watching as a spectator")
                assert "Sam" in screen_text(pilot) and "(you)" not in screen_text(pilot)
                await until_screen(sam, r"Your turn · \d+ s: draw a card")
                await press(sam, "d")
                await until_screen(pilot, "Sam drew from the stock")
                assert "4♦" not in screen_text(pilot)  # a spectator never sees a hand
                await press(pilot, "q")
                await until(pilot, lambda: app.return_value is not None, "the watch to stop")
        finally:
            await conn.close()
