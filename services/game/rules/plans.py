"""Which melds a seat can lay now under its rule set: the opening threshold, the
`contract` of the deal, the card taken from the discard pile. Shared by the bots,
hints and `legal_actions`; the engine stays the referee."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from itertools import combinations

from .contract import check_contract
from .errors import RuleError
from .finder import Found, candidates, find_melds
from .melds import MeldKind, Shape, check_meld
from .ruleset import CONTRACT_RUN, Contract, Ruleset
from .scoring import meld_points
from .state import GameState
from .turns import taken_card_owed

SEARCH_LIMIT = 20_000
"""Contract combinations tried at most: a bot gives up rather than stall a table."""


def opening_ok(state: GameState, seat: int, shapes: Sequence[Shape], left: int) -> bool:
    """Whether laying ``shapes`` (leaving ``left`` cards) meets the opening threshold."""
    if state.opened[seat]:
        return True
    threshold = state.options.opening_threshold
    if threshold <= 0 or left <= state.ruleset.opening_exempt_left:
        return True
    return sum(meld_points(s, state.ruleset) for s in shapes) >= threshold


def contract_plan(hand: Sequence[int], contract: Contract, state: GameState) -> list[Shape] | None:
    """Disjoint melds of ``hand`` that are exactly the contract, most points first."""
    rules = state.ruleset
    shapes = candidates(hand, rules)
    groups = [s for s in shapes if s.kind == MeldKind.GROUP]
    runs = [
        layout
        for s in shapes
        if s.kind == MeldKind.RUN and len(s.cards) >= CONTRACT_RUN
        for layout in _joker_ends(s, rules)
    ]
    best: list[Shape] | None = None
    best_points = -1
    tried = 0
    for gs in combinations(groups, contract.groups):
        for rs in combinations(runs, contract.runs):
            tried += 1
            if tried > SEARCH_LIMIT:
                return best
            chosen = [*gs, *rs]
            used = [c for s in chosen for c in s.cards]
            if len(set(used)) != len(used):
                continue
            left = len(hand) - len(used)
            if not left and rules.must_discard_to_go_out and not contract.no_final_discard:
                continue  # deals 1-6: one card stays for the discard that closes the turn
            try:
                check_contract(chosen, contract, left)
            except RuleError:
                continue
            points = sum(meld_points(s, rules) for s in chosen)
            if points > best_points:
                best, best_points = chosen, points
    return best


def _joker_ends(run: Shape, rules: Ruleset) -> list[Shape]:
    """``run``, and the same cards with its end joker at the other end when that is
    a run too: which end decides whether two runs of one suit join into one
    (JK 3H 4H 5H stays apart from 7H 8H 9H TH; 3H 4H 5H JK does not)."""
    layouts = [run]
    jokers = [i for i in (0, len(run.cards) - 1) if rules.deck.is_joker(run.cards[i])]
    for end in jokers[:1]:
        cards = run.cards[1:] + run.cards[:1] if end == 0 else run.cards[-1:] + run.cards[:-1]
        with contextlib.suppress(RuleError):  # not a run that way round
            layouts.append(check_meld(cards, rules, kind=MeldKind.RUN))
    return layouts


def contract_progress(hand: Sequence[int], contract: Contract, state: GameState) -> int:
    """How many of the contract's melds ``hand`` already holds, side by side: the
    most disjoint smallest groups and runs, each kind counted up to what the
    contract asks. A bot's measure of whether a card moves it closer."""
    shapes = [
        s
        for s in candidates(hand, state.ruleset)
        if (s.kind == MeldKind.GROUP and contract.groups and len(s.cards) == 3)
        or (s.kind == MeldKind.RUN and contract.runs and len(s.cards) == CONTRACT_RUN)
    ]
    best = 0
    tried = 0
    wanted = contract.groups + contract.runs

    def pack(start: int, used: frozenset[int], groups: int, runs: int) -> None:
        nonlocal best, tried
        best = max(best, groups + runs)
        for i in range(start, len(shapes)):
            tried += 1
            if best == wanted or tried > SEARCH_LIMIT:
                return
            shape = shapes[i]
            is_group = shape.kind == MeldKind.GROUP
            if (groups if is_group else runs) >= (contract.groups if is_group else contract.runs):
                continue
            if used.isdisjoint(shape.cards):
                pack(i + 1, used | set(shape.cards), groups + is_group, runs + (not is_group))

    pack(0, frozenset(), 0, 0)
    return best


def finds_melds(state: GameState, seat: int) -> bool:
    """Whether `melds_to_lay` asks the meld finder (not while a contract is unmet)."""
    return state.contract() is None or state.opened[seat]


def melds_to_lay(
    state: GameState, seat: int, hand: Sequence[int], found: Found | None = None
) -> list[Shape]:
    """The melds a greedy player lays now from ``hand`` (possibly none); ``found``
    is the finder's answer for ``hand`` when the caller has it already."""
    rules = state.ruleset
    if not finds_melds(state, seat):
        contract = state.contract()
        assert contract is not None
        return contract_plan(hand, contract, state) or []
    keep = rules.must_discard_to_go_out
    if found is None:
        found = find_melds(hand, rules, keep_one=keep)
    melds = list(found.melds)
    owed = taken_card_owed(state) and state.current == seat
    while melds:
        used = {c for m in melds for c in m.cards}
        left = len(hand) - len(used)
        uses_taken = not owed or state.taken_discard in used
        if opening_ok(state, seat, melds, left) and uses_taken:
            return melds
        melds.remove(min(melds, key=lambda m: meld_points(m, rules)))
    return []
