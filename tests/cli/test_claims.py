"""`contract`'s "Puis-je ?" at the terminal: the discard on offer, the claims, who got it."""

from __future__ import annotations

from pathlib import Path

import grpc

from clients.cli.cards import Style
from clients.cli.narrate import narrate
from clients.cli.narrator import Narrator
from clients.cli.render import Clock, turn_status
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import Discard, DrawStock
from services.game.rules.ruleset import CONTRACT
from tests.game.harness import LONG_TURNS_MS, Player
from tests.rules.helpers import deck_order as scripted_order
from tests.rules.test_claims import HANDS

from .harness import SEATED, rejoining, seat_with_a_bot, servers, sign_in
from .views import SERVER_NOW_MS, Cards, sample_view

PLAIN = Style(False)


def contract_view(current: int = 1) -> table_pb2.TableView:
    """Alice (the viewer) and Bob at a contract table (cafe's cards: only names matter)."""
    view = sample_view(phase=table_pb2.PHASE_PLAY, current=current)
    view.ruleset = "contract"
    return view


def event(seq: int, seat: int | None = None) -> table_pb2.TableEvent:
    told = table_pb2.TableEvent(seq=seq, version=13)
    if seat is not None:
        told.seat = seat
    return told


def bob_draws_and_the_window_opens(deal: Cards) -> list[table_pb2.TableEvent]:
    drew = event(41, seat=1)
    drew.drew.stock_size = 59
    opened = event(42)
    opened.claim_window_opened.card.CopyFrom(deal("5D"))
    opened.claim_window_opened.closes_at.FromMilliseconds(SERVER_NOW_MS + 3_000)
    return [drew, opened]


def test_the_discard_on_offer_is_told_with_the_command_and_the_time_left() -> None:
    view, deal = contract_view(), Cards()
    clock = Clock(now=lambda: SERVER_NOW_MS / 1000)
    narrator = Narrator(PLAIN, clock, commands=True)
    drew, opened = bob_draws_and_the_window_opens(deal)
    assert narrator.tell(drew, view) == "Bob drew from the stock."
    assert narrator.tell(opened, view) == "The 5♦ is on offer: type c to claim it (3 s left)."
    # The prompt says it too while the window is open, with its own countdown.
    view.claim_window.card.CopyFrom(opened.claim_window_opened.card)
    view.claim_window.closes_at.CopyFrom(opened.claim_window_opened.closes_at)
    clock.sync(view)
    assert turn_status(view, clock, PLAIN) == "Bob's turn ⏱ 30s · claim 5♦ (c) ⏱  3s"
    view.claim_window.claimed_by_me = True
    assert turn_status(view, clock, PLAIN).endswith(" · you claimed 5♦")
    # The player who drew is told that the others may claim it.
    mine = contract_view(current=0)
    drew.seat = 0
    assert Narrator(PLAIN, clock, commands=True).tell(drew, mine) == "You drew from the stock."
    assert narrate(opened, mine, PLAIN) == "The 5♦ is on offer to the other players."


def test_a_claim_and_who_got_the_card_are_told_without_the_penalty_card() -> None:
    view, deal = contract_view(), Cards()
    narrator = Narrator(PLAIN, commands=True)
    for told in bob_draws_and_the_window_opens(deal):
        narrator.tell(told, view)
    asked = event(43, seat=1)
    asked.claim_made.SetInParent()
    assert narrator.tell(asked, view) == "Bob asks for the 5♦: “Puis-je ?”"
    got = event(44, seat=1)
    got.claimed.card.CopyFrom(deal("5D"))
    got.claimed.penalty_count = 1
    assert narrator.tell(got, view) == "Bob got the 5♦ and drew a penalty card."
    # The claimant's own event names the penalty card: only its taker sees it.
    got.seat = 0
    got.claimed.penalty_cards.append(deal("KS"))
    assert narrate(got, view, PLAIN) == "You got the 5♦ and drew a penalty card: K♠."
    got.seat = 1  # another seat's card is never named, whatever an event carries
    assert narrate(got, view, PLAIN) == "Bob got the 5♦ and drew a penalty card."


def test_a_window_that_closes_untaken_and_a_card_put_back_are_told() -> None:
    view, deal = contract_view(), Cards()
    closed = event(45)
    closed.claim_window_closed.card.CopyFrom(deal("5D"))
    assert narrate(closed, view, PLAIN) == "Nobody took the 5♦: the claim window is closed."
    put_back = event(46, seat=1)
    put_back.reposed.card.CopyFrom(deal("6C"))
    assert narrate(put_back, sample_view(ruleset="rami51"), PLAIN) == (
        "Bob put the 6♣ back on the discard pile."
    )


def test_a_spectator_is_told_who_may_claim_the_discard() -> None:
    view, deal = contract_view(), Cards()
    view.ClearField("my_seat")
    narrator = Narrator(PLAIN)
    drew, opened = bob_draws_and_the_window_opens(deal)
    narrator.tell(drew, view)
    assert narrator.tell(opened, view) == "The 5♦ is on offer to the players other than Bob."


async def test_the_player_sees_the_offer_claims_and_gets_the_card(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the claim window went by without a word: `c` was there, nothing said
    when. The player's own discard is on offer to the others only: no `c` then."""
    async with servers(fresh_dsn) as running:
        pia = await sign_in(running, "device-cli-test-pia2", "Pia")
        order = scripted_order(HANDS[:2], "QD", "KS KH KD", ruleset=CONTRACT)
        options = table_pb2.TableOptions(turn_timer_ms=LONG_TURNS_MS, claim_window_ms=60_000)
        table_id = await seat_with_a_bot(
            running, tmp_path, "contract", order, opponent=pia, options=options, opponent_first=True
        )
        term = rejoining(running, tmp_path)
        try:
            async with grpc.aio.insecure_channel(running.game_address) as channel:
                other = Player(channel, pia.token, pia.player_id, "Pia")
                await term.expect(SEATED)
                # The table on screen was read before the draw: the draw comes as news.
                await term.expect(r"Your hand \(10\): ")
                await other.send(table_id, DrawStock())
                await term.expect("Pia drew from the stock.")
                await term.expect(r"The Q♦ is on offer: type c to claim it \(\d+ s left\)\.")
                await term.expect(r"\[Pia's turn ⏱ +\d+s · claim Q♦ \(c\) ⏱ +\d+s\] > ")
                await term.send("c")
                await term.expect(
                    "You claimed the Q♦: who gets it is settled when the claim window closes."
                )
                await term.expect(r"\[Pia's turn ⏱ +\d+s · you claimed Q♦\] > ")
                await other.send(table_id, Discard(CONTRACT.deck.ids_of("AS")[0]))
                await term.expect("You got the Q♦ and drew a penalty card: K♥.")
                await term.expect("Pia discarded A♠.")
                await term.expect(r"Your hand \(12\): ")
                await term.send("d")
                await term.expect("You drew K♦")
                await term.send("x 9c")
                await term.expect("You discarded 9♣")
                await other.send(table_id, DrawStock())
                await term.expect(
                    r"The 9♣ you discarded is on offer to the players other than Pia"
                    r" \(\d+ s left\)\."
                )
                await term.expect(r"\[Pia's turn ⏱ +\d+s · your 9♣ is on offer to the others\] > ")
                await term.send("c")
                await term.expect("You discarded that card: you cannot claim it back.")
            await term.leave()
        finally:
            term.kill()
