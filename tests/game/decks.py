"""Scripted cafe decks: card ids by code, and whole decks in deal order, for
CreateTable's test-only `deck_order`."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from services.game.rules.ruleset import CAFE


def card(code: str, copy: int = 0) -> int:
    """The id of a cafe card by its code: ``card("7S")``, ``card("JK", 3)``."""
    return CAFE.deck.ids_of(code)[copy]


JOKERS = tuple(CAFE.deck.ids_of("JK"))


def shuffled_deck(seed: int) -> list[int]:
    """A whole cafe deck in a repeatable order: the same deal, so the same game."""
    order = list(CAFE.deck.ids())
    random.Random(seed).shuffle(order)
    return order


def deck_order(
    seats: int,
    hands: Mapping[int, Sequence[int]] | None = None,
    *,
    discard: int | None = None,
    stock: Sequence[int] = (),
) -> list[int]:
    """A whole cafe deck in deal order: ``order[0]`` is dealt first, one card at a
    time to each seat from seat 0, then one card is turned up for the discard; the
    stock is what is left, ``stock[0]`` on top. Cards not named fill the gaps in
    id order."""
    hands = hands or {}
    named = [c for h in hands.values() for c in h] + list(stock)
    if discard is not None:
        named.append(discard)
    assert len(set(named)) == len(named), "a card is named twice"
    rest = iter([c for c in CAFE.deck.ids() if c not in set(named)])
    dealt = [list(hands.get(s, ())) for s in range(seats)]
    for hand in dealt:
        assert len(hand) <= CAFE.hand_size
        hand.extend(next(rest) for _ in range(CAFE.hand_size - len(hand)))
    order = [dealt[s][k] for k in range(CAFE.hand_size) for s in range(seats)]
    order.append(discard if discard is not None else next(rest))
    order.extend(stock)
    order.extend(rest)
    assert sorted(order) == list(CAFE.deck.ids())
    return order
