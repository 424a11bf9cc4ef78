"""`rami51`'s Reposer at the terminal: the discard taken and put back is not offered again."""

from __future__ import annotations

from pathlib import Path

from clients.cli.cards import Style
from clients.cli.render import Clock, turn_status
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.ruleset import RAMI51
from tests.rules.helpers import deck_order as scripted_order

from .harness import SEATED, rejoining, seat_with_a_bot, servers
from .views import sample_view

SAM = "2S 5S 9S KS 3H 7H JH 4C 8C QC 2D 6D TD"
BOT = "3S 6S TS AH 4H 8H QH 5C 9C KC 3D 7D JD"
DRAW_ONLY = r"\[Your turn[^\]\r\n]*: draw \(d\)\] > "


def test_after_a_put_back_the_prompt_offers_only_the_draw() -> None:
    view = sample_view(phase=table_pb2.PHASE_DRAW, ruleset="rami51", hand="7S TS 2H 9S")
    clock, plain = Clock(), Style(False)
    assert turn_status(view, clock, plain).endswith("draw (d) or take 5♦ (t)")
    view.discard_put_back = True
    assert turn_status(view, clock, plain).endswith(": draw (d)")


async def test_the_card_put_back_is_not_offered_again(fresh_dsn: str, tmp_path: Path) -> None:
    """Before, the prompt still offered `take 6♣ (t)`, which the server refused."""
    async with servers(fresh_dsn, bot_delay_ms=600_000) as running:
        order = scripted_order([SAM, BOT], discard="6C", stock="KH", ruleset=RAMI51)
        await seat_with_a_bot(running, tmp_path, "rami51", order)
        term = rejoining(running, tmp_path)
        try:
            await term.expect(SEATED)
            await term.expect(r"draw \(d\) or take 6♣ \(t\)")
            await term.send("t")
            await term.expect(r"Your hand \(14\): ")
            await term.send("r")
            await term.expect(r"Discard: 6♣")
            await term.expect(DRAW_ONLY)
        finally:
            term.kill()  # the seat is kept: the same turn, from a new client
        assert "You put the 6♣ back" not in term.log.getvalue(), "the own move is not told"
        again = rejoining(running, tmp_path)
        try:
            await again.expect(DRAW_ONLY)
            await again.send("d")
            await again.expect("You drew K♥")
            await again.leave()
        finally:
            again.kill()
