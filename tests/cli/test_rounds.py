"""Games of several rounds: going out ends a round, and the next deal follows."""

from __future__ import annotations

from pathlib import Path

from services.common.pb.rummy.v1 import table_pb2

from .harness import back_at_a_dealt_table, servers

OUT_HAND = "AS 2S 3S 4S 4H 5H 6H 7C 8C 9C QD QH QS"
"""Four melds: with one card drawn, Sam lays them down and goes out with a discard."""


async def test_going_out_with_a_discard_tells_the_round_and_goes_on_to_the_next_deal(
    fresh_dsn: str, tmp_path: Path
) -> None:
    """Before, the client crashed: it looked the discarded card up in the pile,
    which the next deal had already made anew."""
    async with servers(fresh_dsn, bot_delay_ms=600_000) as running:
        options = table_pb2.TableOptions(rounds=2)
        term = await back_at_a_dealt_table(running, tmp_path, OUT_HAND, "KC", options=options)
        try:
            await term.send("m AS 2S 3S 4S / 4H 5H 6H / 7C 8C 9C / QD QH QS")
            await term.expect(r"Your hand \(1\): K♣")
            await term.send("x kc")
            await term.expect("You discarded K♣")
            await term.expect(r"Round 1 over: you went out\.")
            await term.expect(r"Round 2 dealt: 13 cards each\.")
            await term.expect(r"Round 2 · turn 1 of \d+ · cafe")
            await term.expect(r"Your hand \(13\): ")
            await term.expect(r"\[Bot's turn")
            await term.leave()
        finally:
            term.kill()
        assert "Traceback" not in term.log.getvalue(), term.transcript()
