"""Which melds a seat can lay now under its rule set: the opening threshold, the
`contract` of the deal, the card taken from the discard pile. Shared by the bots,
hints and `legal_actions`; the engine stays the referee.

Candidate melds are each built from the whole hand, so two of them may name the
same card id where the hand holds two copies (3S-6S and 5S-6S-7S-8S, both with
the one 5S of a given id): melds go together when no card is needed more often
than the hand holds it, and get their own ids from one shared pool once chosen."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence
from itertools import combinations_with_replacement

from .cards import Deck
from .contract import check_contract
from .errors import RuleError
from .finder import Found, candidates, find_melds
from .melds import MeldKind, Shape, check_meld
from .opening_finder import find_opening
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


class CardCounts:
    """The cards of a hand by what they print (a joker is a joker), packed
    `FIELD` bits a card, so that what several melds need adds up in one number."""

    FIELD = 8
    """Bits a card: room for every meld of a contract needing every copy held."""

    def __init__(self, hand: Sequence[int], deck: Deck) -> None:
        self.codes = deck.codes
        self.pools: dict[str, list[int]] = {}
        for card in hand:
            self.pools.setdefault(self.codes[card], []).append(card)
        self.shift = {code: self.FIELD * i for i, code in enumerate(self.pools)}
        top = 1 << (self.FIELD - 1)
        # A field overflows into its top bit exactly when the melds need more than held.
        self.bias = sum((top - 1 - len(p)) << self.shift[k] for k, p in self.pools.items())
        self.high = sum(top << s for s in self.shift.values())

    def need(self, shape: Shape) -> int:
        """What ``shape`` takes from the hand, packed."""
        shift, codes = self.shift, self.codes
        return sum(1 << shift[codes[c]] for c in shape.cards)

    def held(self, need: int) -> bool:
        """Whether the hand holds every card of ``need`` (several melds' needs added)."""
        return not (need + self.bias) & self.high

    def assign(self, shapes: Sequence[Shape]) -> list[Shape]:
        """``shapes`` (held together) with card ids from one pool: no id twice."""
        pools = {key: list(cards) for key, cards in self.pools.items()}
        return [
            dataclasses.replace(shape, cards=tuple(pools[self.codes[c]].pop() for c in shape.cards))
            for shape in shapes
        ]


def contract_plan(hand: Sequence[int], contract: Contract, state: GameState) -> list[Shape] | None:
    """Melds of ``hand`` laid together that are exactly the contract, most points
    first. Two runs of one suit may share ranks when the hand holds both copies
    (3S-6S and 5S-8S: RULES.md section 5 counts them as two), or be the same run
    twice: a candidate may be chosen again, if the hand holds its cards twice."""
    rules = state.ruleset
    shapes = candidates(hand, rules)
    groups = [s for s in shapes if s.kind == MeldKind.GROUP]
    runs = [
        layout
        for s in shapes
        if s.kind == MeldKind.RUN and len(s.cards) >= CONTRACT_RUN
        for layout in _joker_ends(s, rules)
    ]
    if (contract.groups and not groups) or (contract.runs and not runs):
        return None
    counts = CardCounts(hand, rules.deck)
    needs = {id(s): counts.need(s) for s in [*groups, *runs]}
    best: list[Shape] | None = None
    best_points = -1
    tried = 0
    for gs in combinations_with_replacement(groups, contract.groups):
        for rs in combinations_with_replacement(runs, contract.runs):
            tried += 1
            if tried > SEARCH_LIMIT:
                return counts.assign(best) if best else best
            chosen = [*gs, *rs]
            if not counts.held(sum(needs[id(s)] for s in chosen)):
                continue
            left = len(hand) - sum(len(s.cards) for s in chosen)
            if not left and rules.must_discard_to_go_out and not contract.no_final_discard:
                continue  # deals 1-6: one card stays for the discard that closes the turn
            try:
                check_contract(chosen, contract, left)
            except RuleError:
                continue
            points = sum(meld_points(s, rules) for s in chosen)
            if points > best_points:
                best, best_points = chosen, points
    return counts.assign(best) if best else best


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
    most smallest groups and runs the hand holds together, each kind counted up to
    what the contract asks. A bot's measure of whether a card moves it closer."""
    shapes = [
        s
        for s in candidates(hand, state.ruleset)
        if (s.kind == MeldKind.GROUP and contract.groups and len(s.cards) == 3)
        or (s.kind == MeldKind.RUN and contract.runs and len(s.cards) == CONTRACT_RUN)
    ]
    if not shapes:
        return 0
    counts = CardCounts(hand, state.ruleset.deck)
    needs = [counts.need(s) for s in shapes]
    best = 0
    tried = 0
    wanted = contract.groups + contract.runs

    def pack(start: int, used: int, groups: int, runs: int) -> None:
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
            if counts.held(used + needs[i]):  # the same meld again, if held twice
                pack(i, used + needs[i], groups + is_group, runs + (not is_group))

    pack(0, 0, 0, 0)
    return best


def finds_melds(state: GameState, seat: int) -> bool:
    """Whether `melds_to_lay` asks the meld finder (not while a contract is unmet)."""
    return state.contract() is None or state.opened[seat]


def melds_to_lay(
    state: GameState,
    seat: int,
    hand: Sequence[int],
    found: Found | None = None,
    *,
    to_draw: int = 0,
) -> list[Shape]:
    """The melds a greedy player lays now from ``hand`` (possibly none): the
    finder's (least penalty left) when the engine would take them, else the
    melds that leave the least penalty of those that open and use a discard
    taken this turn (`find_opening`). ``found`` is the finder's answer for
    ``hand`` when the caller has it already; ``to_draw``, the cards the seat
    draws before it lays them (they stay in its hand: a hint before the draw)."""
    rules = state.ruleset
    if not finds_melds(state, seat):
        contract = state.contract()
        assert contract is not None
        return contract_plan(hand, contract, state) or []
    keep = rules.must_discard_to_go_out
    if found is None:
        found = find_melds(hand, rules, keep_one=keep)
    melds = list(found.melds)
    if not melds:
        return melds  # no meld at all: none opens either
    owed = taken_card_owed(state) and state.current == seat
    must_use = state.taken_discard if owed else -1
    used = {c for m in melds for c in m.cards}
    left = len(hand) - len(used) + to_draw
    if opening_ok(state, seat, melds, left) and (must_use < 0 or must_use in used):
        return melds
    # A joker counts more in one meld than another, an ace less low in a run; the
    # taken card may be left out: another set of melds may open where these do not.
    threshold = 0 if state.opened[seat] else state.options.opening_threshold
    opening = find_opening(
        hand,
        rules,
        threshold=threshold,
        exempt_left=rules.opening_exempt_left - to_draw,
        keep_one=keep and not to_draw,
        must_use=must_use,
        enumerated=found.enumerated,
    )
    return list(opening.melds) if opening is not None else []
