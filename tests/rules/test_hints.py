"""What a hint proposes (`hints.hint`): melds the engine lays as they are, with
their opening counted at its best, or the engine's reason for refusing them."""

from __future__ import annotations

from services.game.rules.actions import Meld, MeldSpec
from services.game.rules.hints import hint
from services.game.rules.scoring import meld_points

from .test_classic import LONER, classic


def test_hint_counts_a_joker_above_a_run_where_it_opens() -> None:
    """2H 3H JK is worth 9 with the joker as the 4H, 6 as the AH below: with
    KKK (30) and 444 (12), 51 opens; 48 would not."""
    table = classic(["KS KD KC 4S 4D 4C 2H 3H JK 9C 7D QH 8S AC", LONER], stock="TD")
    table.draw(0)
    got = hint(table.state, 0)
    assert got.opens and got.refusal is None
    assert sum(meld_points(m, table.ruleset) for m in got.melds) == 51
    table.act(0, Meld(tuple(MeldSpec(m.cards) for m in got.melds)))
    assert table.state.opened[0]


def test_hint_finds_the_opening_that_uses_the_taken_discard() -> None:
    """The lightest hand lays AAA, 555 and JQK and keeps the 4S taken from the
    pile; AAA, JQK and 3S 4S 5S open with it (75 points)."""
    table = classic(["5S 5H 5D 3S AH AD AC JC QC KC 9D 7H 2D TH", LONER], discard="4S")
    table.take(0)
    got = hint(table.state, 0)
    assert got.opens, got.refusal
    assert any(table.state.taken_discard in m.cards for m in got.melds)
    table.act(0, Meld(tuple(MeldSpec(m.cards) for m in got.melds)))
    assert table.state.opened[0]


def test_hint_a_taken_discard_that_opens_in_another_set_than_the_lightest_hand() -> None:
    """With the TC taken, the lightest hand lays A-2-3 and 10-J-Q-K of clubs (46
    points, too few); TC JC QC KC AC opens with 51."""
    table = classic(["2C QC JS 5S JC 3S 3C KC KC 7C TS AC 5C 9H", LONER], discard="TC")
    table.take(0)
    got = hint(table.state, 0)
    assert got.opens, got.refusal
    assert any(table.state.taken_discard in m.cards for m in got.melds)
    table.act(0, Meld(tuple(MeldSpec(m.cards) for m in got.melds)))
    assert table.state.opened[0]
