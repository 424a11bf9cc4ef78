"""The table's screens as a person sees them, kept as SVG snapshots beside this
file (`__snapshots__/`) so a reviewer sees each one. After a deliberate change:
`pytest tests/cli/test_snapshots.py --snapshot-update`, then look at the SVGs."""

from __future__ import annotations

from typing import Any

from clients.cli.tui.table_screen import TableScreen, results_notice

from .tables import FrozenTable, cafe_midgame, contract_claim, contract_six, round_result

SMALL = (80, 24)
LARGE = (120, 40)
LOG = [
    "Round 2 dealt: 13 cards each. 6♣ turned up.",
    "Dan laid down [3] 2♦ 3♦ 4♦ 5♦ 6♦ 7♦ 8♦ 9♦.",
    "Dan discarded 6♣.",
    "You drew JK from the stock.",
]


def test_a_table_at_80_by_24(snap_compare: Any) -> None:
    assert snap_compare(FrozenTable(cafe_midgame(), log=LOG), terminal_size=SMALL)


def test_a_table_at_120_by_40(snap_compare: Any) -> None:
    assert snap_compare(FrozenTable(cafe_midgame(), log=LOG), terminal_size=LARGE)


def test_cards_picked_with_keys(snap_compare: Any) -> None:
    """Space picks the card under the cursor, a position number picks that card."""
    app = FrozenTable(cafe_midgame(), log=LOG)
    assert snap_compare(app, press=["right", "space", "3", "_"], terminal_size=SMALL)


def test_a_contract_claim_on_offer(snap_compare: Any) -> None:
    """The deal's contract in the title; the discard on offer with its own countdown."""
    assert snap_compare(FrozenTable(contract_claim()), terminal_size=SMALL)


def test_a_round_result(snap_compare: Any) -> None:
    def show(screen: TableScreen) -> None:
        screen.app.push_screen(results_notice(round_result(screen.session.view), screen.style))

    assert snap_compare(FrozenTable(cafe_midgame(), then=show), terminal_size=SMALL)


def test_the_keys_help(snap_compare: Any) -> None:
    assert snap_compare(FrozenTable(cafe_midgame()), press=["question_mark"], terminal_size=SMALL)


def test_six_seats_at_80_by_24(snap_compare: Any) -> None:
    """A private contract table of six: every seat on its own row, nothing wrapped."""
    assert snap_compare(FrozenTable(contract_six()), terminal_size=SMALL)
