"""The table's screens as a person sees them, kept as SVG snapshots beside this
file (`__snapshots__/`) so a reviewer sees each one (see `snapshots`)."""

from __future__ import annotations

from clients.cli.tui.table_screen import TableScreen, results_notice

from .snapshots import matches_snapshot
from .tables import (
    FrozenTable,
    cafe_midgame,
    contract_claim,
    contract_six,
    long_melds,
    round_result,
)

SMALL = (80, 24)
LARGE = (120, 40)
LOG = [
    "Round 2 dealt: 13 cards each. 6♣ turned up.",
    "Dan laid down [3] 2♦ 3♦ 4♦ 5♦ 6♦ 7♦ 8♦ 9♦.",
    "Dan discarded 6♣.",
    "You drew JK from the stock.",
]


async def test_a_table_at_80_by_24() -> None:
    await matches_snapshot(FrozenTable(cafe_midgame(), log=LOG), "a_table_at_80_by_24", size=SMALL)


async def test_a_table_at_120_by_40() -> None:
    await matches_snapshot(FrozenTable(cafe_midgame(), log=LOG), "a_table_at_120_by_40", size=LARGE)


async def test_a_long_meld_at_80_by_24() -> None:
    """A run of a whole suit: the cards that do not fit go on under the first card."""
    await matches_snapshot(FrozenTable(long_melds()), "a_long_meld_at_80_by_24", size=SMALL)


async def test_cards_picked_with_keys() -> None:
    """Space picks the card under the cursor, a position number picks that card."""
    await matches_snapshot(
        FrozenTable(cafe_midgame(), log=LOG),
        "cards_picked_with_keys",
        size=SMALL,
        keys=["right", "space", "3"],
    )


async def test_a_contract_claim_on_offer() -> None:
    """The deal's contract in the title; the discard on offer with its own countdown."""
    await matches_snapshot(FrozenTable(contract_claim()), "a_contract_claim_on_offer", size=SMALL)


async def test_a_round_result() -> None:
    def show(screen: TableScreen) -> None:
        screen.app.push_screen(results_notice(round_result(screen.session.view), screen.style))

    await matches_snapshot(FrozenTable(cafe_midgame()), "a_round_result", size=SMALL, then=show)


async def test_the_keys_help() -> None:
    await matches_snapshot(
        FrozenTable(cafe_midgame()), "the_keys_help", size=SMALL, keys=["question_mark"]
    )


async def test_six_seats_at_80_by_24() -> None:
    """A private contract table of six: every seat on its own row, nothing wrapped."""
    await matches_snapshot(FrozenTable(contract_six()), "six_seats_at_80_by_24", size=SMALL)
