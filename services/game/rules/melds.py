"""Melds: groups (brelan, carré) and runs (suites), with jokers.

A run is an ordered tuple of card ids from low to high; the order fixes which
card each joker stands for. A group is unordered; a joker in a group may have a
named suit, otherwise it stands for "any missing suit". Table melds are never
split or rearranged: they only grow by lay-offs and change by joker swaps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

from .cards import ACE_HIGH, JOKER, NO_SUIT, SUITS, Deck, card_label
from .errors import Reason, RuleError
from .ruleset import Ruleset


class MeldKind(IntEnum):
    GROUP = 1
    RUN = 2


class Side(IntEnum):
    """Where a lay-off goes on a run; AUTO lets the engine find the end."""

    AUTO = 0
    LOW = 1
    HIGH = 2


@dataclass(frozen=True, slots=True)
class TableMeld:
    id: int
    owner: int
    kind: MeldKind
    cards: tuple[int, ...]
    """Runs: from the lowest position to the highest."""
    rank: int
    """Group: its rank. Run: the rank of its lowest position (1 = ace low)."""
    suit: int = NO_SUIT
    """Run: its suit. Group: NO_SUIT."""
    joker_suits: tuple[tuple[int, int], ...] = ()
    """Group: (joker id, suit) for each joker whose suit the player named."""


@dataclass(frozen=True, slots=True)
class Shape:
    """A validated meld before it gets an id and an owner."""

    kind: MeldKind
    cards: tuple[int, ...]
    rank: int
    suit: int = NO_SUIT
    joker_suits: tuple[tuple[int, int], ...] = ()

    def place(self, meld_id: int, owner: int) -> TableMeld:
        return TableMeld(
            meld_id, owner, self.kind, self.cards, self.rank, self.suit, self.joker_suits
        )


def _refuse(message: str, reason: Reason = Reason.MELD_INVALID) -> RuleError:
    return RuleError(reason, message)


def check_joker_limits(naturals: int, jokers: int, rules: Ruleset) -> None:
    if naturals < rules.min_naturals:
        raise _refuse(
            f"A meld needs at least {rules.min_naturals} natural cards besides its jokers.",
            Reason.MELD_JOKER_LIMIT,
        )
    if rules.naturals_at_least_jokers and jokers > naturals:
        raise _refuse(
            "A meld may not hold more jokers than natural cards.", Reason.MELD_JOKER_LIMIT
        )
    if rules.max_jokers_per_meld is not None and jokers > rules.max_jokers_per_meld:
        raise _refuse(
            f"A meld may hold at most {rules.max_jokers_per_meld} joker.", Reason.MELD_JOKER_LIMIT
        )


def run_starts(cards: Sequence[int], deck: Deck) -> list[int]:
    """Every rank the first position of ``cards`` (in this order) can take as a run.

    Empty when the cards are not one suit or not consecutive. Ace is 1 at the
    bottom, 14 at the top, never both (a run spans at most 1..14 less one).
    """
    rank, suit = deck.rank, deck.suit
    if len({suit[c] for c in cards if rank[c] != JOKER}) > 1:
        return []
    return _starts([rank[c] for c in cards])


def _starts(ranks: Sequence[int]) -> list[int]:
    """`run_starts` for the ranks of one suit's cards (a joker is `JOKER`), in order."""
    n = len(ranks)
    first = -1
    for i, r in enumerate(ranks):
        if r != JOKER:
            first = i
            break
    if first < 0:
        return []
    r0 = ranks[first]
    candidates = [r0 - first] if r0 != 1 else [1 - first, ACE_HIGH - first]
    starts = []
    for start in candidates:
        if start < 1 or start + n - 1 > ACE_HIGH:
            continue
        for i in range(first + 1, n):
            r = ranks[i]
            if r != JOKER and r != start + i and not (r == 1 and start + i == ACE_HIGH):
                break
        else:
            starts.append(start)
    return starts


def _counts(cards: Sequence[int], deck: Deck) -> tuple[int, int]:
    jokers = sum(1 for c in cards if deck.rank[c] == JOKER)
    return len(cards) - jokers, jokers


def _sorted_orders(cards: tuple[int, ...], deck: Deck) -> list[tuple[int, ...]]:
    """Without jokers, the order of a run's cards fixes nothing: read them sorted,
    the ace low, then high."""
    if any(deck.rank[c] == JOKER for c in cards):
        return []
    return [
        tuple(sorted(cards, key=lambda c: deck.rank[c])),
        tuple(sorted(cards, key=lambda c: ACE_HIGH if deck.rank[c] == 1 else deck.rank[c])),
    ]


def check_run(cards: Sequence[int], rules: Ruleset) -> Shape:
    """A run is read as given, then reversed, and, with no joker whose place the
    order would fix, sorted (ace low, then ace high)."""
    n = len(cards)
    if n < 3:
        raise _refuse("A meld needs at least 3 cards.", Reason.MELD_TOO_SHORT)
    if n > rules.max_run_length:
        raise _refuse(f"A run has at most {rules.max_run_length} cards.")
    deck = rules.deck
    rank = deck.rank
    ranks = [rank[c] for c in cards]
    jokers = ranks.count(JOKER)
    check_joker_limits(n - jokers, jokers, rules)
    suits = {deck.suit[c] for c in cards}
    suits.discard(NO_SUIT)
    if len(suits) > 1:
        raise _refuse("A run's cards must all be of one suit.")
    if suits:
        suit = suits.pop()
        given = tuple(cards)
        starts = _starts(ranks)
        if starts:
            return Shape(MeldKind.RUN, given, starts[0], suit)
        starts = _starts(ranks[::-1])
        if starts:
            return Shape(MeldKind.RUN, given[::-1], starts[0], suit)
        if not jokers:
            for order in _sorted_orders(given, deck):
                starts = _starts([rank[c] for c in order])
                if starts:
                    return Shape(MeldKind.RUN, order, starts[0], suit)
    raise _refuse(
        "These cards do not follow each other: a run needs consecutive ranks "
        "(the ace goes below the 2 or above the king, never both)."
    )


def check_group(
    cards: Sequence[int], joker_suits: Sequence[tuple[int, int]], rules: Ruleset
) -> Shape:
    n = len(cards)
    if n < 3:
        raise _refuse("A meld needs at least 3 cards.", Reason.MELD_TOO_SHORT)
    if n > rules.max_group_size:
        raise _refuse(f"A group has at most {rules.max_group_size} cards.")
    deck = rules.deck
    rank, suit = deck.rank, deck.suit
    naturals = [c for c in cards if rank[c] != JOKER]
    check_joker_limits(len(naturals), n - len(naturals), rules)
    ranks = {rank[c] for c in naturals}
    if len(ranks) != 1:
        raise _refuse("A group's natural cards must all have the same rank.")
    named = _named_suits(cards, joker_suits, rules) if joker_suits else ()
    if rules.group_distinct_suits:
        taken = [suit[c] for c in naturals] + [s for _, s in named]
        if len(set(taken)) != len(taken):
            raise _refuse(
                "A group needs different suits: two copies of one card are the same card."
            )
    return Shape(MeldKind.GROUP, tuple(cards), ranks.pop(), NO_SUIT, named)


def _named_suits(
    cards: Sequence[int], joker_suits: Sequence[tuple[int, int]], rules: Ruleset
) -> tuple[tuple[int, int], ...]:
    deck = rules.deck
    named: dict[int, int] = {}
    for joker, suit in joker_suits:
        if joker not in cards or deck.rank[joker] != JOKER:
            raise _refuse("A suit can only be named for a joker of this meld.")
        if not 0 <= suit < 4:
            raise _refuse("That is not a suit.")
        named[joker] = suit
    return tuple(sorted(named.items()))


_KIND_NAMES = {MeldKind.GROUP: "a group", MeldKind.RUN: "a run"}


def check_meld(
    cards: Sequence[int],
    rules: Ruleset,
    joker_suits: Sequence[tuple[int, int]] = (),
    kind: MeldKind | None = None,
) -> Shape:
    """Validate a new meld as ``kind``; without one, a group when its natural cards
    share one rank, else a run. Cards that make the other kind instead are refused
    with MELD_KIND_MISMATCH; cards that make neither, with the named kind's reason."""
    if kind is None:
        rank = rules.deck.rank
        ranks = {rank[c] for c in cards}
        ranks.discard(JOKER)
        return _check_as(
            MeldKind.GROUP if len(ranks) == 1 else MeldKind.RUN, cards, rules, joker_suits
        )
    try:
        return _check_as(kind, cards, rules, joker_suits)
    except RuleError as error:
        asked = error
    other = MeldKind.RUN if kind == MeldKind.GROUP else MeldKind.GROUP
    try:
        _check_as(other, cards, rules, joker_suits)
    except RuleError:
        raise asked from None  # neither kind: say why not the one asked for
    raise _refuse(
        f"These cards make {_KIND_NAMES[other]}, not {_KIND_NAMES[kind]}.",
        Reason.MELD_KIND_MISMATCH,
    )


def _check_as(
    kind: MeldKind, cards: Sequence[int], rules: Ruleset, joker_suits: Sequence[tuple[int, int]]
) -> Shape:
    if kind == MeldKind.GROUP:
        return check_group(cards, joker_suits, rules)
    if joker_suits:
        raise _refuse("A suit can only be named for a joker in a group.")
    return check_run(cards, rules)


def extend_meld(meld: TableMeld, cards: Sequence[int], side: Side, rules: Ruleset) -> TableMeld:
    """The meld with ``cards`` added, or a refusal; ``meld`` itself is unchanged."""
    if not cards:
        raise _refuse("Name at least one card to lay off.", Reason.LAY_OFF_INVALID)
    try:
        if meld.kind == MeldKind.GROUP:
            shape = check_group(meld.cards + tuple(cards), meld.joker_suits, rules)
            return TableMeld(
                meld.id, meld.owner, meld.kind, shape.cards, shape.rank, NO_SUIT, meld.joker_suits
            )
        return _lay_off_run(meld, tuple(cards), side, rules)
    except RuleError as error:
        if error.reason == Reason.LAY_OFF_AMBIGUOUS:
            raise
        raise RuleError(
            Reason.LAY_OFF_INVALID, f"That does not fit this meld: {error.message}"
        ) from None


def _lay_off_run(meld: TableMeld, cards: tuple[int, ...], side: Side, rules: Ruleset) -> TableMeld:
    if side != Side.AUTO:
        return _lay_off_at(meld, cards, side, rules)
    ends = [Side.HIGH, Side.LOW] if meld.rank + len(meld.cards) - 1 < ACE_HIGH else [Side.LOW]
    fitted: list[TableMeld] = []
    refusals: list[RuleError] = []
    for where in ends:
        try:
            fitted.append(_lay_off_at(meld, cards, where, rules))
        except RuleError as error:
            refusals.append(error)
    if len(fitted) > 1:
        # They would stand for different cards: the player chooses, not the server.
        raise RuleError(
            Reason.LAY_OFF_AMBIGUOUS,
            "These cards fit at both ends of the run: say which end (low or high).",
        )
    if fitted:
        return fitted[0]
    raise refusals[0]


def _lay_off_at(meld: TableMeld, cards: tuple[int, ...], where: Side, rules: Ruleset) -> TableMeld:
    deck = rules.deck
    for order in [cards, *_sorted_orders(cards, deck)]:
        new = meld.cards + order if where == Side.HIGH else order + meld.cards
        want = meld.rank if where == Side.HIGH else meld.rank - len(order)
        if len(new) > rules.max_run_length:
            raise _refuse(f"A run has at most {rules.max_run_length} cards.")
        if want in run_starts(new, deck):
            naturals, jokers = _counts(new, deck)
            check_joker_limits(naturals, jokers, rules)
            return TableMeld(meld.id, meld.owner, meld.kind, new, want, meld.suit)
    raise _refuse("the cards must continue the run at one of its ends.")


def joker_targets(meld: TableMeld, joker: int, rules: Ruleset) -> list[tuple[int, int]]:
    """The (rank, suit) cards a joker of this meld stands for; one for a run."""
    deck = rules.deck
    if meld.kind == MeldKind.RUN:
        rank = meld.rank + meld.cards.index(joker)
        return [(1 if rank == ACE_HIGH else rank, meld.suit)]
    named = dict(meld.joker_suits)
    if joker in named:
        return [(meld.rank, named[joker])]
    if not rules.group_distinct_suits:
        return [(meld.rank, s) for s in range(4)]
    taken = {deck.suit[c] for c in meld.cards if deck.rank[c] != JOKER} | set(named.values())
    return [(meld.rank, s) for s in range(4) if s not in taken]


def describe_joker(meld: TableMeld, joker: int, rules: Ruleset) -> str:
    """`TS`, or `7D/7C` for a group joker that stands for either missing suit."""
    return "/".join(card_label(r, s) for r, s in joker_targets(meld, joker, rules))


def replace_joker(meld: TableMeld, joker: int, replacement: int, rules: Ruleset) -> TableMeld:
    """The meld with ``replacement`` in place of ``joker`` (the exact card it stands for)."""
    deck = rules.deck
    if joker not in meld.cards or deck.rank[joker] != JOKER:
        raise _refuse("That joker is not in this meld.", Reason.SWAP_INVALID)
    if deck.rank[replacement] == JOKER:
        raise _refuse("Put a natural card in place of the joker.", Reason.SWAP_INVALID)
    target = (deck.rank[replacement], deck.suit[replacement])
    allowed = joker_targets(meld, joker, rules)
    if target not in allowed:
        wanted = " or ".join(card_label(r, s) for r, s in allowed) or "no card"
        raise _refuse(f"This joker stands for {wanted}.", Reason.SWAP_INVALID)
    cards = tuple(replacement if c == joker else c for c in meld.cards)
    joker_suits = tuple(js for js in meld.joker_suits if js[0] != joker)
    return TableMeld(meld.id, meld.owner, meld.kind, cards, meld.rank, meld.suit, joker_suits)


def suit_name(suit: int) -> str:
    return SUITS[suit] if 0 <= suit < 4 else "?"


def fits(meld: TableMeld, card: int, rules: Ruleset) -> Side | None:
    """Where one card could be laid off on ``meld`` (a quick test for bots and hints;
    `extend_meld` stays the referee). None when it does not fit."""
    deck = rules.deck
    rank = deck.rank[card]
    jokers = sum(1 for c in meld.cards if deck.rank[c] == JOKER)
    naturals = len(meld.cards) - jokers
    if meld.kind == MeldKind.GROUP:
        if len(meld.cards) >= rules.max_group_size:
            return None
        if rank == JOKER:
            return Side.AUTO if _joker_fits(naturals, jokers + 1, rules) else None
        if rank != meld.rank:
            return None
        if rules.group_distinct_suits:
            taken = {deck.suit[c] for c in meld.cards if deck.rank[c] != JOKER}
            taken |= {s for _, s in meld.joker_suits}
            free = 4 - len(taken) - (jokers - len(meld.joker_suits))
            if deck.suit[card] in taken or free <= 0:
                return None
        return Side.AUTO
    if len(meld.cards) >= rules.max_run_length:
        return None
    low, high = meld.rank - 1, meld.rank + len(meld.cards)
    if rank == JOKER:
        if not _joker_fits(naturals, jokers + 1, rules):
            return None
        return Side.HIGH if high <= ACE_HIGH else (Side.LOW if low >= 1 else None)
    if deck.suit[card] != meld.suit:
        return None
    if high <= ACE_HIGH and (rank == high or (rank == 1 and high == ACE_HIGH)):
        return Side.HIGH
    if low >= 1 and rank == low:
        return Side.LOW
    return None


def _joker_fits(naturals: int, jokers: int, rules: Ruleset) -> bool:
    if rules.naturals_at_least_jokers and jokers > naturals:
        return False
    return rules.max_jokers_per_meld is None or jokers <= rules.max_jokers_per_meld


def complete_group(
    meld: TableMeld, joker: int, cards: tuple[int, int], rules: Ruleset
) -> TableMeld:
    """`classic`: the brelan ``meld`` made a carré by the two cards it misses, its joker out."""
    deck = rules.deck
    if meld.kind != MeldKind.GROUP or len(meld.cards) != 3:
        raise _refuse("Only a brelan with a joker is completed this way.", Reason.SWAP_INVALID)
    if joker not in meld.cards or deck.rank[joker] != JOKER:
        raise _refuse("That joker is not in this meld.", Reason.SWAP_INVALID)
    naturals = [c for c in meld.cards if c != joker]
    suits = {deck.suit[c] for c in naturals} | {deck.suit[c] for c in cards}
    if any(deck.rank[c] != meld.rank for c in cards) or len(suits) != 4:
        raise _refuse(
            "Take a joker from a brelan by adding both missing cards of the carré.",
            Reason.SWAP_INVALID,
        )
    return TableMeld(meld.id, meld.owner, meld.kind, (*naturals, *cards), meld.rank, NO_SUIT)
