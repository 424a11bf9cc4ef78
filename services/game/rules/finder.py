"""The meld finder: the best set of melds in a hand (least penalty left).

It powers hints, the bots and the automatic play. Cards that print alike (the
two 7S) are one *key* with a count. Candidates are enumerated directly, long
runs included, since splitting a long run can break the joker limit; each is a
multiset of keys plus a number of jokers. A memoised search then picks, key by
key, which candidates to lay and which cards to keep. (opening_finder.py searches the
same candidates for the melds that open.)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

from .cards import ACE_HIGH, JOKER
from .melds import MeldKind, Shape
from .ruleset import Ruleset

KEY_BITS = 2
"""Bits per key in the packed counts: at most 3 copies of one card in a hand."""
_NEG = -(10**9)

Need = list[tuple[int, int]]
"""A candidate's cards as (bit shift of a key in the packed counts, copies used)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A meld the hand can make, as keys and a number of jokers (no card ids yet)."""

    keys: tuple[int, ...]
    """Key indices, one entry per card used (a key may repeat in `contract` groups)."""
    jokers: int
    points: int
    kind: MeldKind
    layout: tuple[int, ...]
    """Runs: for each position from low to high, a key index or -1 for a joker.
    Groups: the key indices; jokers follow."""
    rank: int
    suit: int


@dataclass(frozen=True, slots=True)
class Found:
    melds: tuple[Shape, ...]
    left: tuple[int, ...]
    """The cards no meld uses."""
    penalty: int
    """Penalty of the cards left."""
    enumerated: Enumerated | None = field(default=None, repr=False, compare=False)
    """The hand's candidates as the search enumerated them, for another search of
    the same hand (`opening_finder.find_opening`) to start from. Never changed."""


class KeyedHand:
    """A hand as keys (cards that print alike), each with its card ids, and jokers."""

    def __init__(self, hand: Sequence[int], rules: Ruleset) -> None:
        deck = rules.deck
        rank, suit = deck.rank, deck.suit
        self.rules = rules
        self.jokers: list[int] = []
        by_key: dict[tuple[int, int], list[int]] = {}
        for card in hand:
            r = rank[card]
            if r == JOKER:
                self.jokers.append(card)
            else:
                by_key.setdefault((r, suit[card]), []).append(card)
        self.keys = sorted(by_key)
        self.cards = [by_key[k] for k in self.keys]
        self.index = {k: i for i, k in enumerate(self.keys)}
        self.points = [rules.penalties.of_rank(r) for r, _ in self.keys]
        self.joker_points = rules.penalties.joker


Enumerated = tuple[KeyedHand, list[Candidate]]
"""A hand by keys, and every distinct meld its cards can make."""


def _limits_ok(naturals: int, jokers: int, rules: Ruleset) -> bool:
    if naturals < rules.min_naturals:
        return False
    if rules.naturals_at_least_jokers and jokers > naturals:
        return False
    return rules.max_jokers_per_meld is None or jokers <= rules.max_jokers_per_meld


def _runs(hand: KeyedHand, out: dict[tuple[tuple[int, ...], int], Candidate]) -> None:
    rules, jokers = hand.rules, len(hand.jokers)
    min_naturals = rules.min_naturals
    points, joker_points = hand.points, hand.joker_points
    by_suit: list[dict[int, int]] = [{}, {}, {}, {}]
    for key, (rank, suit) in enumerate(hand.keys):
        by_suit[suit][rank] = key
    for suit, present in enumerate(by_suit):
        if len(present) < min_naturals:
            continue
        if 1 in present:
            present[ACE_HIGH] = present[1]
        # A run's first natural card sits at most `jokers` places above its start
        # (only jokers can fill the places below it): other starts find nothing.
        starts = {p - j for p in present for j in range(jokers + 1)}
        # Highest start first: of the layouts of one card set, the first is kept,
        # and a joker above the naturals counts more in an opening than one below.
        for start in sorted((s for s in starts if 1 <= s < ACE_HIGH - 1), reverse=True):
            longest = min(rules.max_run_length, ACE_HIGH - start + 1)
            # The held positions grow with the length: extend them, never rebuild.
            held = [p for p in (start, start + 1) if p in present]
            for length in range(3, longest + 1):
                top = start + length - 1
                if top in present:
                    held.append(top)
                missing = length - len(held)
                if missing > jokers:
                    break
                if len(held) < min_naturals:
                    continue  # too few naturals, whatever the jokers do
                positions = range(start, start + length)
                for extra in range(jokers - missing + 1):
                    used = missing + extra
                    if not _limits_ok(len(held) - extra, used, rules):
                        continue
                    for as_joker in combinations(held, extra):
                        keys = tuple(sorted(present[p] for p in held if p not in as_joker))
                        if (keys, used) in out:
                            continue
                        layout = tuple(
                            present[p] if p in present and p not in as_joker else -1
                            for p in positions
                        )
                        value = sum(points[k] for k in keys) + used * joker_points
                        out[(keys, used)] = Candidate(
                            keys, used, value, MeldKind.RUN, layout, start, suit
                        )


def _groups(hand: KeyedHand, out: dict[tuple[tuple[int, ...], int], Candidate]) -> None:
    rules, jokers = hand.rules, len(hand.jokers)
    size = rules.max_group_size
    # Keys sort by (rank, suit): one pass gathers each rank's keys, suits ascending.
    pools: dict[int, list[int]] = {}
    for key, (rank, _) in enumerate(hand.keys):
        copies = 1 if rules.group_distinct_suits else len(hand.cards[key])
        pools.setdefault(rank, []).extend([key] * copies)
    for rank, pool in pools.items():
        for taken in range(rules.min_naturals, min(size, len(pool)) + 1):
            for keys in set(combinations(pool, taken)):
                for used in range(max(0, 3 - taken), min(size - taken, jokers) + 1):
                    if not _limits_ok(taken, used, rules) or (keys, used) in out:
                        continue
                    points = sum(hand.points[k] for k in keys) + used * hand.joker_points
                    out[(keys, used)] = Candidate(
                        keys, used, points, MeldKind.GROUP, keys, rank, -1
                    )


def enumerate_candidates(hand: Sequence[int], rules: Ruleset) -> Enumerated:
    """The hand by keys, and every distinct meld its cards can make."""
    h = KeyedHand(hand, rules)
    found: dict[tuple[tuple[int, ...], int], Candidate] = {}
    _runs(h, found)
    _groups(h, found)
    return h, list(found.values())


def candidates(hand: Sequence[int], rules: Ruleset) -> list[Shape]:
    """Every distinct meld these cards can make (one concrete layout per card set)."""
    h, found = enumerate_candidates(hand, rules)
    return [realise(h, c, [list(cs) for cs in h.cards], list(h.jokers)) for c in found]


def shuffled_candidates(
    hand: Sequence[int], rules: Ruleset, rng: random.Random, limit: int
) -> list[Shape]:
    """``candidates(hand, rules)`` shuffled by ``rng``, first ``limit`` only: the same
    melds and the same draws from ``rng``, but only the melds returned are built."""
    h, found = enumerate_candidates(hand, rules)
    rng.shuffle(found)
    return [realise(h, c, [list(cs) for cs in h.cards], list(h.jokers)) for c in found[:limit]]


def packed_counts(h: KeyedHand) -> int:
    """How many cards of each key ``h`` holds, packed `KEY_BITS` bits per key."""
    return sum(len(cs) << (KEY_BITS * i) for i, cs in enumerate(h.cards))


def by_first_key(
    h: KeyedHand, found: Sequence[Candidate]
) -> list[list[tuple[Candidate, Need, int]]]:
    """Candidates by their lowest key, richest first, each with what it takes
    from the packed counts: the (shift, copies) it needs, and the sum it removes."""
    by_first: list[list[tuple[Candidate, Need, int]]] = [[] for _ in h.keys]
    for cand in found:
        need: dict[int, int] = {}
        for k in cand.keys:
            need[k] = need.get(k, 0) + 1
        delta = sum(n << (KEY_BITS * k) for k, n in need.items())
        by_first[min(cand.keys)].append((cand, [(KEY_BITS * k, n) for k, n in need.items()], delta))
    for options in by_first:
        options.sort(key=lambda o: -o[0].points)
    return by_first


def find_melds(hand: Sequence[int], rules: Ruleset, *, keep_one: bool = False) -> Found:
    """The melds that leave the least penalty in ``hand``.

    With ``keep_one``, at least one card stays out of the melds (a `cafe` player
    never melds the last card: a discard closes the turn).
    """
    h, found = enumerate_candidates(hand, rules)
    by_first = by_first_key(h, found)
    counts = packed_counts(h)
    memo: dict[tuple[int, int, bool], tuple[int, object]] = {}
    mask = (1 << KEY_BITS) - 1
    nkeys = len(h.keys)

    def best(counts: int, jokers: int, first: int, skipped: bool) -> int:
        while first < nkeys and not (counts >> (KEY_BITS * first)) & mask:
            first += 1
        if first == nkeys:
            if keep_one and not skipped and jokers == 0:
                return _NEG
            return 0
        memo_key = (counts, jokers, skipped)
        hit = memo.get(memo_key)
        if hit is not None:
            return hit[0]
        top = best(counts - (1 << (KEY_BITS * first)), jokers, first, True)
        choice: object = None
        for cand, need, delta in by_first[first]:
            if cand.jokers > jokers:
                continue
            if any(((counts >> shift) & mask) < n for shift, n in need):
                continue
            value = cand.points + best(counts - delta, jokers - cand.jokers, first, skipped)
            if value > top:
                top, choice = value, (cand, delta)
        memo[memo_key] = (top, choice)
        return top

    best(counts, len(h.jokers), 0, False)
    return _rebuild(h, found, memo, counts, keep_one, mask)


def _rebuild(
    h: KeyedHand,
    found: list[Candidate],
    memo: dict[tuple[int, int, bool], tuple[int, object]],
    counts: int,
    keep_one: bool,
    mask: int,
) -> Found:
    pools = [list(cs) for cs in h.cards]
    jokers = list(h.jokers)
    melds: list[Shape] = []
    left: list[int] = []
    skipped = False
    first = 0
    n = len(h.keys)
    joker_count = len(jokers)
    while True:
        while first < n and not (counts >> (KEY_BITS * first)) & mask:
            first += 1
        if first == n:
            break
        _, choice = memo[(counts, joker_count, skipped)]
        if choice is None:
            left.append(pools[first].pop())
            counts -= 1 << (KEY_BITS * first)
            skipped = True
            continue
        assert isinstance(choice, tuple)
        cand, delta = choice
        melds.append(realise(h, cand, pools, jokers))
        counts -= delta
        joker_count -= cand.jokers
    left.extend(jokers)
    penalty = sum(h.rules.penalties.of_rank(h.rules.deck.rank[c]) for c in left)
    return Found(tuple(melds), tuple(left), penalty, (h, found))


def realise(h: KeyedHand, cand: Candidate, pools: list[list[int]], jokers: list[int]) -> Shape:
    """A concrete meld for a candidate, taking its cards out of ``pools`` and ``jokers``."""
    if cand.kind == MeldKind.RUN:
        cards = tuple(pools[k].pop() if k >= 0 else jokers.pop() for k in cand.layout)
        return Shape(MeldKind.RUN, cards, cand.rank, cand.suit)
    naturals = tuple(pools[k].pop() for k in cand.layout)
    wild = tuple(jokers.pop() for _ in range(cand.jokers))
    return Shape(MeldKind.GROUP, naturals + wild, cand.rank)
