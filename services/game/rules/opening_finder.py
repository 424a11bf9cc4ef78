"""The opening finder: melds of a hand that open, with the least penalty left.

`find_melds` keeps the least penalty in hand whatever the melds count towards an
opening threshold, and there they differ: a joker costs the same penalty
anywhere, but counts 4 in 4S 4H JK and 9 above 6H 7H 8H; an ace counts 1 at the
bottom of a run. When the finder's melds miss the threshold, `find_opening`
looks through the same candidates (each card set once, its joker where it
counts most) for disjoint melds that reach it, or that leave so few cards that
no threshold applies, and that hold a card which must be used (a discard taken
this turn); of those, the ones that leave the least penalty.

The search is the finder's, key by key, with two more things in its memo: the
points still missing (none below 0) and whether the card to use is still out.
A branch is cut as soon as the cards it has left, each at its highest opening
value, cannot make up the points missing; one is cut too once the card to use
can no longer go into any meld.
"""

from __future__ import annotations

from collections.abc import Sequence

from .finder import (
    KEY_BITS,
    Candidate,
    Enumerated,
    Found,
    KeyedHand,
    Need,
    by_first_key,
    enumerate_candidates,
    realise,
)
from .melds import MeldKind, Shape
from .ruleset import Ruleset
from .scoring import group_points, run_points

HIGHEST_VALUE = 11
"""What one card counts in an opening at most: an ace high (a joker may stand for one)."""
_NEG = -(10**9)

_Option = tuple[Candidate, Need, int, int, int, bool]
"""A candidate, what it takes from the packed counts (as in `by_first_key`), its
opening points, the most its cards could count, and whether it holds the card to use."""
_State = tuple[int, int, int, int, bool]
"""Packed counts, jokers, cards kept so far (capped), points missing, card to use still out."""


def candidate_points(cand: Candidate) -> int:
    """What a candidate counts towards an opening, as `meld_points` counts its meld."""
    if cand.kind == MeldKind.GROUP:
        return group_points(cand.rank, len(cand.keys) + cand.jokers)
    return run_points(cand.rank, len(cand.layout))


def find_opening(
    hand: Sequence[int],
    rules: Ruleset,
    *,
    threshold: int,
    exempt_left: int = -1,
    keep_one: bool = False,
    must_use: int = -1,
    enumerated: Enumerated | None = None,
) -> Found | None:
    """The melds of ``hand`` that count ``threshold`` points or more (or leave
    ``exempt_left`` cards or fewer), keep a card with ``keep_one`` and hold
    ``must_use`` when it is a card, leaving the least penalty; None when no set
    of melds does. With ``threshold`` 0, any melds (or none) open. ``enumerated``:
    the candidates of ``hand`` when the caller has them (`Found.enumerated`)."""
    if must_use >= 0 and must_use not in hand:
        return None
    h, found = enumerated or enumerate_candidates(hand, rules)
    deck = rules.deck
    nkeys = len(h.keys)
    if must_use < 0:
        target = -1
    elif deck.is_joker(must_use):
        target = nkeys  # any meld with a joker holds it: jokers are interchangeable
    else:
        target = h.index[(deck.rank[must_use], deck.suit[must_use])]
    # Cards in no meld stay in hand whatever is laid: they are out of the search
    # from the start, and count nothing towards what the rest could still make.
    useful = {k for cand in found for k in cand.keys}
    wild = HIGHEST_VALUE if any(cand.jokers for cand in found) else 0
    if (0 <= target < nkeys and target not in useful) or (target == nkeys and not wild):
        return None  # the card to use is in no meld
    cap = max(exempt_left, 0) + 1
    idle = sum(len(cs) for k, cs in enumerate(h.cards) if k not in useful)
    highest = [
        (HIGHEST_VALUE if r == 1 else min(r, 10)) if k in useful else 0
        for k, (r, _) in enumerate(h.keys)
    ]
    options: list[list[_Option]] = [
        [
            (
                cand,
                need,
                delta,
                candidate_points(cand),
                sum(highest[k] for k in cand.keys) + wild * cand.jokers,
                cand.jokers > 0 if target == nkeys else target in cand.keys,
            )
            for cand, need, delta in by_key
        ]
        for by_key in by_first_key(h, found)
    ]
    mask = (1 << KEY_BITS) - 1
    memo: dict[_State, tuple[int, _Option | None]] = {}

    def best(
        counts: int, jokers: int, first: int, kept: int, missing: int, owed: bool, room: int
    ) -> int:
        """The most penalty laid from here on, or `_NEG` when nothing here opens;
        ``room`` is what the cards here could count at most."""
        while first < nkeys and not (counts >> (KEY_BITS * first)) & mask:
            first += 1
        if owed and first > target:
            return _NEG  # every key from here on is above the card's: no meld can hold it
        if first == nkeys:
            left = kept + jokers
            if owed or (keep_one and not left) or (missing and left > exempt_left):
                return _NEG
            return 0
        if missing > room and kept > exempt_left:
            return _NEG
        state = (counts, jokers, kept, missing, owed)
        hit = memo.get(state)
        if hit is not None:
            return hit[0]
        top = best(
            counts - (1 << (KEY_BITS * first)),
            jokers,
            first,
            min(kept + 1, cap),
            missing,
            owed,
            room - highest[first],
        )
        choice: _Option | None = None
        for option in options[first]:
            cand, need, delta, points, most, uses = option
            if cand.jokers > jokers or any(((counts >> s) & mask) < n for s, n in need):
                continue
            rest = best(
                counts - delta,
                jokers - cand.jokers,
                first,
                kept,
                max(0, missing - points),
                owed and not uses,
                room - most,
            )
            if rest != _NEG and cand.points + rest > top:
                top, choice = cand.points + rest, option
        memo[state] = (top, choice)
        return top

    counts = sum(len(h.cards[k]) << (KEY_BITS * k) for k in useful)
    room = sum(highest[k] * len(cs) for k, cs in enumerate(h.cards)) + wild * len(h.jokers)
    start: _State = (counts, len(h.jokers), min(idle, cap), max(0, threshold), target >= 0)
    if best(counts, len(h.jokers), 0, start[2], start[3], start[4], room) == _NEG:
        return None
    return _rebuild(h, memo, start, cap, must_use)


def _rebuild(
    h: KeyedHand,
    memo: dict[_State, tuple[int, _Option | None]],
    state: _State,
    cap: int,
    must_use: int,
) -> Found:
    """The melds the memo chose from ``state`` on, ``must_use`` among their cards."""
    rules = h.rules
    pools = [list(cs) for cs in h.cards]
    jokers = list(h.jokers)
    # A meld takes the last card of its key's pool, a card kept the first one:
    # the card to use goes last, into the first meld of its key.
    for pool in [*pools, jokers]:
        if must_use in pool:
            pool.remove(must_use)
            pool.append(must_use)
    mask = (1 << KEY_BITS) - 1
    counts, joker_count, kept, missing, owed = state
    melds: list[Shape] = []
    left: list[int] = []
    first = 0
    while True:
        while first < len(pools) and not (counts >> (KEY_BITS * first)) & mask:
            first += 1
        if first == len(pools):
            break
        _, choice = memo[(counts, joker_count, kept, missing, owed)]
        if choice is None:
            left.append(pools[first].pop(0))
            counts -= 1 << (KEY_BITS * first)
            kept = min(kept + 1, cap)
            continue
        cand, _, delta, points, _, uses = choice
        melds.append(realise(h, cand, pools, jokers))
        counts -= delta
        joker_count -= cand.jokers
        missing = max(0, missing - points)
        owed = owed and not uses
    left.extend(c for pool in pools for c in pool)  # the cards in no meld
    left.extend(jokers)
    penalty = sum(rules.penalties.of_rank(rules.deck.rank[c]) for c in left)
    return Found(tuple(melds), tuple(left), penalty)
