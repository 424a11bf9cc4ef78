"""Card values: the penalty of a hand, and what a meld is worth for an opening."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import accumulate

from .cards import ACE_HIGH
from .melds import MeldKind, Shape, TableMeld
from .ruleset import Ruleset


def card_penalty(card: int, rules: Ruleset) -> int:
    return rules.penalties.of_rank(rules.deck.rank[card])


def hand_penalty(cards: Iterable[int], rules: Ruleset) -> int:
    """Points a hand left at the end of a round costs (e.g. K Q J A = 41 in `cafe`)."""
    of_rank = rules.penalties.of_rank
    rank = rules.deck.rank
    return sum(of_rank(rank[c]) for c in cards)


def _opening_value(rank: int) -> int:
    if rank == ACE_HIGH:
        return 11
    return min(rank, 10) if rank != 1 else 1


_RUN_UP_TO = tuple(accumulate(_opening_value(rank) for rank in range(ACE_HIGH + 1)))
"""What a run from the ace low up to each rank counts: a run's points are a difference."""


def group_points(rank: int, size: int) -> int:
    """What a group of ``size`` cards of ``rank`` counts towards an opening."""
    return (11 if rank == 1 else min(rank, 10)) * size


def run_points(start: int, length: int) -> int:
    """What a run of ``length`` cards from rank ``start`` counts towards an opening."""
    return _RUN_UP_TO[start + length - 1] - _RUN_UP_TO[start - 1]


def meld_points(meld: Shape | TableMeld, rules: Ruleset) -> int:
    """What a meld counts towards an opening threshold: 2-10 face, J Q K 10; an ace
    11 in a group or at the top of a run and 1 at the bottom; a joker as the card
    it stands for (seed 001's 51 points: 10S JS QS = 30, 9H 9C 9D = 27)."""
    if meld.kind == MeldKind.GROUP:
        return group_points(meld.rank, len(meld.cards))
    return run_points(meld.rank, len(meld.cards))
