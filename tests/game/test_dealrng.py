"""Production deals: the OS's randomness, every order of the deck equally likely."""

from __future__ import annotations

import itertools
import struct
from collections import Counter

import pytest

from services.game import dealrng
from services.game.dealrng import DealRandom

SHUFFLES = 24_000


def test_every_order_of_four_cards_comes_up_as_often_as_the_others() -> None:
    """24 orders, 1,000 expected each: a biased or cyclic-only shuffle (Sattolo's
    slip, `% i` for `% (i + 1)`) misses orders or favours some by far more than
    the 6 standard deviations allowed here."""
    rng = DealRandom()
    seen: Counter[tuple[int, ...]] = Counter()
    for _ in range(SHUFFLES):
        cards = [0, 1, 2, 3]
        rng.shuffle(cards)
        seen[tuple(cards)] += 1
    assert set(seen) == set(itertools.permutations(range(4)))
    expected = SHUFFLES / 24
    assert all(abs(n - expected) < 190 for n in seen.values()), seen


def test_a_shuffle_keeps_every_card_once() -> None:
    deck = list(range(110))
    DealRandom().shuffle(deck)
    assert sorted(deck) == list(range(110)) and deck != list(range(110))


def test_a_draw_that_would_favour_some_cards_is_drawn_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2**64 leaves 1 over when split in 3: the top 64-bit word would tip the
    first swap of three cards, so it is thrown away and the next word decides."""
    top = (1 << 64) - 1
    draws = [struct.pack(">QQQ", 0, 0, top), (2).to_bytes(8)]
    monkeypatch.setattr(dealrng.os, "urandom", lambda n: draws.pop(0))
    cards = ["a", "b", "c"]
    DealRandom().shuffle(cards)
    # Word 2 leaves "c" last; then word 0 swaps the first two. Kept, the top word
    # (0 mod 3) would have given ["b", "c", "a"].
    assert cards == ["b", "a", "c"]
    assert draws == []
