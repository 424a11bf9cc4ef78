"""Joker swaps at the terminal, on a table dealt from a known deck.

The table is created as the matchmaker would (service credential), with a deck
in a fixed order; the client finds it when the matchmaker says the player is
already seated (ALREADY_SEATED), as it would after losing its own records.
Every swap asks where the joker goes; the player may always choose.
"""

from __future__ import annotations

from pathlib import Path

from services.game.rules.ruleset import CLASSIC
from tests.game.harness import card, deck_order
from tests.rules.helpers import deck_order as scripted_order

from .harness import SEATED, Terminal, back_at_a_dealt_table, rejoining, seat_with_a_bot, servers

HAND = "QH QD QC JK QS 2C 3C 7S 8S 9S 4C 5H KD"
CLASSIC_HAND = "KH KD KC 7S 8S JK 9S 2C 4D 6H TD 3S 9H QC"
CLASSIC_BOT = "2H 3H 5C 6C 8C TC JC 2D 5D 7D 8D JD 4H 7H"


async def test_the_player_says_where_a_swapped_joker_goes(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        order = deck_order(2, {0: [card(c) for c in HAND.split()]}, stock=[card("4D")])
        await seat_with_a_bot(running, tmp_path, "cafe", order)
        term = rejoining(running, tmp_path)
        try:
            await term.expect(SEATED)
            assert await term.next_turn()
            await term.send("d")
            await term.expect("You drew 4♦")
            await term.send("m QH QD QC JK")
            await term.expect(r"\[1\] you: Q♥ Q♦ Q♣ JK\(Q♠\)")
            # A full group: once the Q♠ is in, the joker fits on no meld; a new one it is.
            await term.send("s 1 QS")
            await term.expect("Where does the joker go?")
            await term.expect(r"for example: (2C 3C (4C )?JK|JK 2C 3C)")
            await term.send("2C 3C")
            await term.expect(r"\[2\] you: 2♣ 3♣ JK\(4♣\)")
            await term.send("m 7s 8s 9s")
            await term.expect(r"\[3\] you: 7♠ 8♠ 9♠")
            # Two melds take it now: nothing moves before the player picks one.
            await term.send("s 2 4c")
            await term.expect(r"it fits on \[2\] \[3\]")
            await term.send("")
            await term.expect("Swap cancelled")
            await term.send("s 2 4c")
            await term.expect(r"it fits on \[2\] \[3\]")
            await term.send("2")
            await term.expect(r"\[2\] you: 2♣ 3♣ 4♣ JK\(5♣\)")
            await term.expect(r"Your hand \(3\): 5♥   4♦ K♦")
            await term.send("x kd")
            await term.expect("You discarded K♦")
            await term.leave()
        finally:
            term.kill()


async def test_classic_keeps_a_swapped_joker_in_hand(fresh_dsn: str, tmp_path: Path) -> None:
    async with servers(fresh_dsn) as running:
        order = scripted_order(
            [CLASSIC_HAND, CLASSIC_BOT], discard="5S", stock="4C", ruleset=CLASSIC
        )
        await seat_with_a_bot(running, tmp_path, "classic", order)
        term = rejoining(running, tmp_path)
        try:
            await term.expect(SEATED)
            assert await term.next_turn()
            await term.send("d")
            await term.expect("You drew 4♣")
            await term.send("m KH KD KC / 7S 8S JK")  # 30 + 24: the 51 to open
            await term.expect(r"\[2\] you: 7♠ 8♠ JK\(9♠\)")
            await term.send("s 2 9s")
            await term.expect("k to keep it in hand")
            await term.send("k")
            await term.expect(r"\[2\] you: 7♠ 8♠ 9♠")
            await term.expect(r"Your hand \(\d+\): [^\r\n]*JK")
            await term.send("x qc")
            await term.expect("You discarded Q♣")
            await term.leave()
        finally:
            term.kill()


async def test_classic_frees_a_brelan_joker_with_both_missing_cards(
    fresh_dsn: str, tmp_path: Path
) -> None:
    hand = "QH QD JK 7S 8S 9S TS QS QC 2C 4D 6H 3S 9H"
    async with servers(fresh_dsn) as running:
        order = scripted_order([hand, CLASSIC_BOT], discard="5S", stock="4C", ruleset=CLASSIC)
        await seat_with_a_bot(running, tmp_path, "classic", order)
        term = rejoining(running, tmp_path)
        try:
            await term.expect(SEATED)
            assert await term.next_turn()
            await term.send("d")
            await term.expect("You drew 4♣")
            await term.send("m QH QD JK / 7S 8S 9S TS")  # 30 + 34: the 51 to open
            await term.expect(r"\[1\] you: Q♥ Q♦ JK")
            # One card is not enough to free a brelan's joker: the server says why.
            await term.send("s 1 qs")
            await term.send("k")
            await term.expect(r"Refused: [^\r\n]*both missing cards")
            await term.send("s 1 qs qc")
            await term.expect("k to keep it in hand")
            await term.send("k")
            await term.expect(r"\[1\] you: Q♥ Q♦ Q♠ Q♣")
            await term.expect(r"Your hand \(\d+\): [^\r\n]*JK")
            await term.leave()
        finally:
            term.kill()


async def test_end_of_input_at_a_question_quits_and_keeps_the_seat(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        await seat_with_a_bot(running, tmp_path)
        term = rejoining(running, tmp_path)
        try:
            await term.expect(SEATED)
            await term.send("q")
            # The question, then the prompt it is answered at: only a prompt
            # waiting for a line reads Ctrl-D as the end of input.
            await term.expect(r"\[y/N\][^>]*> ")
            await term.send_raw("\x04")  # Ctrl-D: no more input will come
            await term.expect("Your seat is kept")
            assert await term.finish() == 0
        finally:
            term.kill()


async def test_a_swap_out_of_turn_is_refused_before_any_question(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the player was asked where the joker goes, and only then refused."""
    # The bot takes its time: its turn lasts for the whole test.
    async with servers(fresh_dsn, bot_delay_ms=600_000) as running:
        term = await back_at_a_dealt_table(running, tmp_path, HAND, "4D")
        try:
            await term.send("m QH QD QC JK")
            await term.expect(r"\[1\] you: Q♥ Q♦ Q♣ JK\(Q♠\)")
            await term.send("x kd")
            await term.expect("You discarded K♦")
            await term.send("s 1 qs")
            refused = r"Refused: It is not your turn\. \[NOT_YOUR_TURN\]"
            assert await term.expect([refused, "Where does the joker go"]) == 0, term.transcript()
            await term.expect(r"Your hand \(9\): ")
            await term.leave()
        finally:
            term.kill()
        assert "Where does the joker go" not in term.log.getvalue()


async def test_a_swap_for_the_wrong_card_is_refused_before_any_question(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the player was asked where the joker goes, and only then refused."""
    hand = "AS AH AC JK 9H 2C 3C 7S 8S 9S 4C 5H KD"
    async with servers(fresh_dsn, bot_delay_ms=600_000) as running:
        term = await back_at_a_dealt_table(running, tmp_path, hand, "4D")
        try:
            await term.send("m AS AH AC JK")
            await term.expect(r"\[1\] you: A♠ A♥ A♣ JK\(A♦\)")
            await term.send("s 1 9h")
            said = r"The joker of \[1\] stands for A♦, not 9♥\."
            assert await term.expect([said, "Where does the joker go"]) == 0, term.transcript()
            await term.expect(r"Your hand \(10\): ")
            await term.leave()
        finally:
            term.kill()
        assert "Where does the joker go" not in term.log.getvalue()


async def test_a_spectator_is_told_where_a_swapped_joker_went(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the commentary said only which meld the joker came from."""
    async with servers(fresh_dsn, bot_delay_ms=600_000) as running:
        order = deck_order(2, {0: [card(c) for c in HAND.split()]}, stock=[card("4D")])
        table_id = await seat_with_a_bot(running, tmp_path / "sam", "cafe", order)
        term = rejoining(running, tmp_path / "sam")
        spectator = Terminal(
            *("watch", table_id, "--server", running.address, "--game", running.game_address),
            *("--config-dir", str(tmp_path / "spectator")),
        )
        try:
            await spectator.expect("as a spectator")
            await term.expect(SEATED)
            assert await term.next_turn()
            await term.send("d")
            await term.expect("You drew 4♦")
            await term.send("m QH QD QC JK")
            await term.expect(r"\[1\] you: Q♥ Q♦ Q♣ JK\(Q♠\)")
            await term.send("s 1 QS")
            await term.expect("Where does the joker go?")
            await term.send("2C 3C")
            await term.expect(r"\[2\] you: 2♣ 3♣ JK\(4♣\)")
            await spectator.expect(
                r"Sam took the joker from \[1\], putting in Q♠, and laid it down in a new"
                r" meld: \[2\] 2♣ 3♣ JK\(4♣\)\."
            )
            await term.send("m 7s 8s 9s")
            await term.expect(r"\[3\] you: 7♠ 8♠ 9♠")
            await term.send("s 2 4c")
            await term.expect(r"it fits on \[2\] \[3\]")
            await term.send("3")
            await term.expect(r"\[3\] you: [^\r\n]*JK")
            await spectator.expect(
                r"Sam took the joker from \[2\], putting in 4♣, and laid it off on \[3\]:"
                r" (JK\(6♠\) 7♠ 8♠ 9♠|7♠ 8♠ 9♠ JK\(10♠\))\."
            )
            await term.leave()
            await spectator.expect("Game over")
            assert await spectator.finish() == 0
        finally:
            term.kill()
            spectator.kill()
        told = spectator.log.getvalue()
        # The lay-off and the meld that placed the joker are not told a second time.
        assert "Sam laid down [2]" not in told and "Sam laid off JK" not in told, told
