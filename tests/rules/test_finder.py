"""The meld finder against an exhaustive search on small hands, and named cases."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from services.game.rules import RuleError, find_melds, hand_penalty, parse_cards
from services.game.rules.finder import candidates
from services.game.rules.melds import MeldKind, check_meld

from .helpers import CAFE, sorted_codes

DECK = CAFE.deck
NATURALS = [c for c in DECK.ids() if not DECK.is_joker(c)]
JOKERS = [c for c in DECK.ids() if DECK.is_joker(c)]
HANDS = int(os.environ.get("RULES_FINDER_HANDS", "300"))


def is_meld(cards: Sequence[int]) -> bool:
    """Whether these cards make a meld in *some* order: as given (any group, any run
    without jokers), or as a run with each joker in each free place of a window."""
    try:
        check_meld(cards, CAFE)
        return True
    except RuleError:
        pass
    naturals = [c for c in cards if not DECK.is_joker(c)]
    jokers = [c for c in cards if DECK.is_joker(c)]
    if not jokers or len({DECK.suit[c] for c in naturals}) != 1:
        return False
    n = len(cards)
    for ace in (1, 14):
        place = {(ace if DECK.rank[c] == 1 else DECK.rank[c]): c for c in naturals}
        if len(place) != len(naturals):
            return False
        for start in range(1, 15 - n + 1):
            if not all(start <= p < start + n for p in place):
                continue
            wild = iter(jokers)
            order = [place[p] if p in place else next(wild) for p in range(start, start + n)]
            try:
                check_meld(order, CAFE)
                return True
            except RuleError:
                pass
    return False


def least_penalty(hand: Sequence[int], keep_one: bool) -> int:
    """Exhaustive search over every partition of the hand into melds and loose cards."""
    n = len(hand)
    points = [hand_penalty([c], CAFE) for c in hand]
    melds_with: list[list[int]] = [[] for _ in range(n)]
    for mask in range(1, 1 << n):
        if mask.bit_count() >= 3 and is_meld([hand[i] for i in range(n) if mask >> i & 1]):
            low = (mask & -mask).bit_length() - 1
            melds_with[low].append(mask)

    @cache
    def best(mask: int) -> int:
        if not mask:
            return 0
        low = (mask & -mask).bit_length() - 1
        result = points[low] + best(mask & ~(1 << low))
        for meld in melds_with[low]:
            if meld & mask == meld:
                result = min(result, best(mask & ~meld))
        return result

    full = (1 << n) - 1
    if not keep_one:
        return best(full)
    return min(points[i] + best(full & ~(1 << i)) for i in range(n))


@st.composite
def small_hands(draw: st.DrawFn) -> list[int]:
    """6 to 9 cards with 0 to 2 jokers; often from a narrow pool (a few ranks of a
    few suits, both copies) so that melds, overlaps and choices are common."""
    size = draw(st.integers(6, 9))
    jokers = draw(st.integers(0, 2))
    if draw(st.booleans()):
        pool = NATURALS
    else:
        low = draw(st.integers(1, 10))
        ranks = {(r - 1) % 13 + 1 for r in range(low, low + 5)}  # 10..14 wraps to the ace
        suits = set(draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True)))
        pool = [c for c in NATURALS if DECK.rank[c] in ranks and DECK.suit[c] in suits]
    naturals = draw(
        st.lists(st.sampled_from(pool), min_size=size - jokers, max_size=size - jokers, unique=True)
    )
    return naturals + draw(
        st.lists(st.sampled_from(JOKERS), min_size=jokers, max_size=jokers, unique=True)
    )


@settings(max_examples=HANDS, deadline=None)
@given(small_hands(), st.booleans())
def test_finder_matches_an_exhaustive_search(hand: list[int], keep_one: bool) -> None:
    found = find_melds(hand, CAFE, keep_one=keep_one)
    assert found.penalty == least_penalty(hand, keep_one), sorted_codes(hand)
    used = [c for meld in found.melds for c in meld.cards]
    assert Counter(used + list(found.left)) == Counter(hand), "disjoint, from the hand, all"
    assert found.penalty == hand_penalty(found.left, CAFE)
    for meld in found.melds:
        shape = check_meld(meld.cards, CAFE)
        assert (shape.kind, shape.rank) == (meld.kind, meld.rank)
        if meld.kind == MeldKind.RUN:
            assert shape.cards == meld.cards, "a run is laid in the order it reads"
    if keep_one:
        assert found.left, "with keep_one a card is left for the discard"


@settings(max_examples=HANDS // 3, deadline=None)
@given(small_hands())
def test_candidates_are_valid_melds_of_the_hand(hand: list[int]) -> None:
    for shape in candidates(hand, CAFE):
        assert not Counter(shape.cards) - Counter(hand)
        assert check_meld(shape.cards, CAFE).kind == shape.kind


def test_finder_seed_example_lays_the_club_run_and_keeps_the_9h() -> None:
    found = find_melds(parse_cards("4C 5C 6C 9H", CAFE), CAFE, keep_one=True)
    assert [sorted_codes(m.cards) for m in found.melds] == ["4C 5C 6C"]
    assert sorted_codes(found.left) == "9H" and found.penalty == 9


def test_finder_keep_one_never_melds_the_whole_hand() -> None:
    hand = parse_cards("4C 5C 6C", CAFE)
    assert find_melds(hand, CAFE).penalty == 0
    kept = find_melds(hand, CAFE, keep_one=True)
    assert kept.melds == () and kept.penalty == 15


def test_finder_enumerates_long_runs_whole_when_splitting_breaks_the_joker_limit() -> None:
    # 3H JK 5H JK 7H JK 9H JK is one run (4 naturals, 4 jokers); no split into
    # 3-card runs keeps each part within the joker limit.
    hand = parse_cards("3H 5H 7H 9H JK JK JK JK KS", CAFE)
    found = find_melds(hand, CAFE, keep_one=True)
    assert len(found.melds) == 1 and len(found.melds[0].cards) == 8
    assert sorted_codes(found.left) == "KS"


def test_finder_cuts_a_run_short_when_a_group_saves_more() -> None:
    # 9S-KS as one run leaves QH QD 2C (22); 9S TS JS + QS QH QD leaves KS 2C (12).
    hand = parse_cards("9S TS JS QS KS QH QD 2C", CAFE)
    found = find_melds(hand, CAFE, keep_one=True)
    assert found.penalty == least_penalty(hand, keep_one=True) == 12
    assert sorted(sorted_codes(m.cards) for m in found.melds) == ["9S TS JS", "QS QH QD"]
