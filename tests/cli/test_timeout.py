"""A turn that runs out with a card taken from the discard pile still owed: the card
goes back to the pile (`classic`, `rami51` before opening), and the players are told."""

from __future__ import annotations

from pathlib import Path

import grpc

from clients.cli.cards import Style
from clients.cli.narrate import narrate
from clients.cli.narrator import Narrator
from clients.cli.render import Clock, follow_resume, turn_status
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import TakeDiscard
from services.game.rules.ruleset import CLASSIC
from tests.game.harness import Player
from tests.rules.helpers import deck_order as scripted_order

from .harness import SEATED, rejoining, seat_with_a_bot, servers, sign_in
from .test_swap import CLASSIC_HAND
from .views import SERVER_NOW_MS, Cards, sample_view

PLAIN = Style(False)
TURN_MS = 3_000
PIA = "5H 5D 5C JC QC KC 8D 9D TD 2H 3C 7H 4D 6D"
"""With the 5♠ on the pile, an opening of 51 is in Pia's hand: she may take it."""


def bob_takes_and_times_out(deal: Cards) -> list[table_pb2.TableEvent]:
    """Bob's turn begins, he takes the 6♣ from the discard pile, and his time runs out."""
    began = table_pb2.TableEvent(seq=41, version=13, seat=1)
    began.turn_started.turn = 8
    took = table_pb2.TableEvent(seq=42, version=14, seat=1)
    took.took_discard.card.CopyFrom(deal("6C"))
    passed = table_pb2.TableEvent(seq=43, version=15, seat=1)
    passed.turn_passed.reason = table_pb2.TURN_PASSED_REASON_TIMED_OUT
    return [began, took, passed]


def told(view: table_pb2.TableView, events: list[table_pb2.TableEvent]) -> str | None:
    narrator = Narrator(PLAIN)
    return [narrator.tell(e, view) for e in events][-1]


def test_another_players_taken_card_going_back_is_told() -> None:
    deal = Cards("classic")
    events = bob_takes_and_times_out(deal)
    assert told(sample_view(ruleset="classic"), events) == (
        "Bob's time ran out: the 6♣ went back to the discard pile and the turn passed."
    )
    # Told too when the turn began before the client followed the table.
    assert told(sample_view(ruleset="classic"), events[1:]) == (
        "Bob's time ran out: the 6♣ went back to the discard pile and the turn passed."
    )
    # Where the taken card is the player's to keep, it stays in the hand.
    assert told(sample_view(), bob_takes_and_times_out(Cards())) == (
        "Time ran out: Bob's turn passed."
    )


def test_a_taken_card_that_was_used_or_is_no_longer_owed_stays_put() -> None:
    deal = Cards("classic")
    began, took, passed = bob_takes_and_times_out(deal)
    laid = table_pb2.TableEvent(seq=42, version=14, seat=1)
    laid.laid_off.cards.append(took.took_discard.card)
    view = sample_view(ruleset="classic")
    assert told(view, [began, took, laid, passed]) == "Time ran out: Bob's turn passed."
    # rami51: once opened, a taken card need not be used.
    rami51 = sample_view(ruleset="rami51")
    rami51.seats[1].has_opened = True
    assert told(rami51, [began, took, passed]) == "Time ran out: Bob's turn passed."
    rami51.seats[1].has_opened = False
    assert told(rami51, [began, took, passed]) == (
        "Bob's time ran out: the 6♣ went back to the discard pile and the turn passed."
    )


def test_the_players_own_taken_card_is_known_from_the_view() -> None:
    """A client that came back mid-turn did not see the card taken: its view says."""
    view = sample_view(ruleset="classic", hand="7S TS 6C 9S JK")
    view.taken_discard_id = view.hand[2].id
    passed = table_pb2.TableEvent(seq=43, version=15, seat=0)
    passed.turn_passed.reason = table_pb2.TURN_PASSED_REASON_TIMED_OUT
    assert narrate(passed, view, PLAIN) == (
        "Your time ran out: the 6♣ went back to the discard pile and the turn passed."
    )


async def test_both_players_are_told_the_taken_card_went_back(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the client said only that the time ran out and the turn passed."""
    async with servers(fresh_dsn) as running:
        pia = await sign_in(running, "device-cli-test-pia3", "Pia")
        order = scripted_order([CLASSIC_HAND, PIA], discard="5S", ruleset=CLASSIC)
        options = table_pb2.TableOptions(turn_timer_ms=TURN_MS)
        table_id = await seat_with_a_bot(
            running, tmp_path, "classic", order, opponent=pia, options=options
        )
        term = rejoining(running, tmp_path)
        try:
            async with grpc.aio.insecure_channel(running.game_address) as channel:
                other = Player(channel, pia.token, pia.player_id, "Pia")
                await term.expect(SEATED)
                await term.send("t")
                await term.expect(r"Your hand \(15\): ")
                await term.expect(
                    "Your time ran out: the 5♠ went back to the discard pile and the turn passed."
                )
                await other.send(table_id, TakeDiscard())
                await term.expect("Pia took 5♠ from the discard pile.")
                await term.expect(
                    "Pia's time ran out: the 5♠ went back to the discard pile and the turn passed."
                )
            await term.leave()
        finally:
            term.kill()


def test_a_seat_that_left_during_its_turn_is_told_in_the_right_person() -> None:
    view = sample_view()
    for seat, text in ((0, "You left during your turn."), (1, "Bob left during their turn.")):
        passed = table_pb2.TableEvent(seq=43, version=15, seat=seat)
        passed.turn_passed.reason = table_pb2.TURN_PASSED_REASON_LEFT
        assert narrate(passed, view, PLAIN) == text


def test_a_turn_given_its_time_back_after_an_outage_is_told() -> None:
    resumed = table_pb2.TableEvent(seq=44, version=16, seat=1)
    resumed.turn_resumed.turn = 9
    resumed.turn_resumed.stopped_for.FromMilliseconds(62_400)
    assert narrate(resumed, sample_view(), PLAIN) == (
        "The game could not be reached for 62 s: Bob's turn goes on with the time it had left."
    )
    resumed.seat = 0
    assert narrate(resumed, sample_view(), PLAIN) == (
        "The game could not be reached for 62 s: your turn goes on with the time it had left."
    )


def test_the_prompt_counts_down_from_the_time_given_back() -> None:
    view = sample_view(phase=table_pb2.PHASE_DRAW)
    clock = Clock(now=lambda: SERVER_NOW_MS / 1000 + 40)  # the turn's 30 s are gone
    clock.sync(view)
    clock.offset = 0.0
    assert "Your turn ⏱  0s" in turn_status(view, clock, PLAIN)
    resumed = table_pb2.TableEvent(seq=41, version=13, seat=0)
    resumed.turn_resumed.turn = 7
    resumed.turn_resumed.deadline.FromMilliseconds(SERVER_NOW_MS + 40_000 + 12_000)
    assert follow_resume(view, resumed)
    assert "Your turn ⏱ 12s" in turn_status(view, clock, PLAIN)
    resumed.seat = 1  # not the turn in the view: nothing to follow
    assert not follow_resume(view, resumed)
