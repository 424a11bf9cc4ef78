"""`contract` plans with two copies of a card: RULES.md §5 counts overlapping runs
of one suit (3-6 and 5-8, "possible with two decks") as two, so the plan, the
legal moves, the bots and their claims must see them. Each candidate meld is
built from the whole hand, so two candidates may name the same card id where
the hand holds two copies: the plan counts cards by what they print and gives
the chosen melds their own ids."""

from __future__ import annotations

from services.game.rules import Meld, apply, legal_actions
from services.game.rules.bots import GreedyBot
from services.game.rules.plans import contract_plan, contract_progress

from .helpers import codes, sorted_codes
from .test_contract import CONTRACT, HEARTS, at_deal

OVERLAPPING = "3S 4S 5S 6S 5S 6S 7S 8S KD KH"
"""Deal 3's two runs of 4, 3S-6S and 5S-8S, with both copies of the 5S and the 6S."""


def test_contract_plan_lays_two_overlapping_runs_of_one_suit_from_both_copies() -> None:
    table = at_deal(3, [OVERLAPPING, HEARTS], stock="KC")
    table.draw(0)
    state = table.state
    contract = state.contract()
    assert contract is not None
    plan = contract_plan(state.hands[0], contract, state)
    assert plan is not None, "3S-6S and 5S-8S are the contract"
    assert sorted(sorted_codes(m.cards, CONTRACT) for m in plan) == [
        "3S 4S 5S 6S",
        "5S 6S 7S 8S",
    ]
    used = [c for m in plan for c in m.cards]
    assert len(set(used)) == len(used) == 8, "each copy goes into its own run"
    assert set(used) <= set(state.hands[0])


def test_contract_legal_actions_offer_the_overlapping_runs_and_the_engine_takes_them() -> None:
    table = at_deal(3, [OVERLAPPING, HEARTS], stock="KC")
    table.draw(0)
    melds = [a for a in legal_actions(table.state, 0) if isinstance(a, Meld)]
    assert melds, "the contract is there to lay"
    for meld in melds:
        after, _ = apply(table.state, 0, meld, table.now)
        assert after.opened[0]


def test_contract_greedy_bot_lays_overlapping_runs_rather_than_discard() -> None:
    table = at_deal(3, [OVERLAPPING, HEARTS], stock="KC")
    table.draw(0)
    action = GreedyBot().move(table.state, 0)
    assert isinstance(action, Meld), action
    table.act(0, action)
    assert table.state.opened[0]
    assert table.hand(0) == "KH KD KC"


def test_contract_progress_counts_overlapping_runs_held_with_both_copies() -> None:
    table = at_deal(3, [OVERLAPPING, HEARTS], stock="KC")
    state = table.state
    contract = state.contract()
    assert contract is not None
    assert contract_progress(state.hands[0], contract, state) == 2
    without_8s = [c for c in state.hands[0] if codes([c], CONTRACT) != "8S"]
    assert contract_progress(without_8s, contract, state) == 1


def test_contract_greedy_bot_claims_the_card_that_makes_an_overlapping_second_run() -> None:
    """Seat 1 holds 3S-6S and 5S 6S 7S: the 8S turned up makes 5S-8S, its second
    run of deal 3, out of the other copies of the 5S and the 6S."""
    hands = [HEARTS, "3S 4S 5S 6S 5S 6S 7S KD KH 2C"]
    table = at_deal(3, hands, discard="8S", stock="KC")
    assert table.state.current == 0
    table.draw(0)
    assert GreedyBot().claims(table.state, 1)


IDENTICAL = "3S 4S 5S 6S 3S 4S 5S 6S KD KH"
"""Deal 3's two runs of 4 as the same run twice, from both copies of each card."""


def test_contract_the_same_run_twice_from_both_copies_is_planned_offered_and_laid() -> None:
    table = at_deal(3, [IDENTICAL, HEARTS], stock="KC")
    state = table.state
    contract = state.contract()
    assert contract is not None
    assert contract_progress(state.hands[0], contract, state) == 2
    table.draw(0)
    plan = contract_plan(table.state.hands[0], contract, table.state)
    assert plan is not None
    assert [sorted_codes(m.cards, CONTRACT) for m in plan] == ["3S 4S 5S 6S"] * 2
    assert len({c for m in plan for c in m.cards}) == 8, "each copy in its own run"
    assert any(isinstance(a, Meld) for a in legal_actions(table.state, 0))
    action = GreedyBot().move(table.state, 0)
    assert isinstance(action, Meld), action
    table.act(0, action)
    assert table.state.opened[0] and table.hand(0) == "KH KD KC"


def test_contract_a_run_held_once_is_not_planned_twice() -> None:
    table = at_deal(3, ["3S 4S 5S 6S 3S 4S 5S KD KH QC", HEARTS], stock="KC")
    table.draw(0)
    state = table.state
    contract = state.contract()
    assert contract is not None
    assert contract_plan(state.hands[0], contract, state) is None
    assert contract_progress(state.hands[0], contract, state) == 1
