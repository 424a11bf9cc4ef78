"""Whether a seat may take the top of the discard pile where the card taken
must be used the same turn (`classic`: "seulement si la carte piochée dans la
défausse permet au joueur de poser"). A card the seat could not use would leave
it with no legal move: no discard (the card is owed), no Reposer in `classic`.

`discard_use` answers with a way to use the card, as the actions that would do
it, found with the engine's own validators (a meld's check and the opening's
count as `check_laying` makes them, `extend_meld`, `replace_joker`, `complete_group`),
so that what it allows the engine accepts:

- before opening: an opening made this turn that holds the card (`find_opening`);
- after: a meld of the card with cards of the hand; a lay-off on a table meld,
  the card alone or with the cards of the hand that bridge the gap to a run's
  end (TS JS onto 7S 8S 9S, or a joker of the hand standing for the TS); the
  card put in a joker's place on the table; or, where a joker taken back may
  stay in hand, a joker taken back by another card of the hand, then melded or
  laid off with the card.

The search stops there: a use that needs two joker swaps first, or a lay-off
that only passes with more cards of the hand beyond the card (where a rule set
counts naturals against jokers), is not looked for."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from .actions import Action, LayOff, Meld, MeldSpec, SwapJoker
from .cards import ACE_HIGH
from .errors import Reason, RuleError
from .finder import candidates
from .melds import (
    MeldKind,
    Shape,
    Side,
    TableMeld,
    complete_group,
    extend_meld,
    joker_targets,
    replace_joker,
)
from .opening_finder import find_opening
from .ruleset import Ruleset, TakenDiscard
from .state import GameState

Use = tuple[Action, ...]
"""Actions, in order, that the engine would accept after the take; the last uses the card."""


def can_take(state: GameState, seat: int) -> bool:
    """Whether ``seat``'s turn allows taking the top discard (the pile aside from
    whose turn and phase it is): not put back this turn, and usable."""
    if not state.discard or state.reposed:
        return False
    try:
        check_take_usable(state, seat)
    except RuleError:
        return False
    return True


def check_take_usable(state: GameState, seat: int) -> None:
    """Refuse taking the top discard when it cannot be used this turn."""
    rules = state.ruleset
    if rules.taken_discard is not TakenDiscard.USE_THIS_TURN or not state.discard:
        return
    if discard_use(state, seat) is not None:
        return
    if state.opened[seat]:
        raise RuleError(
            Reason.DISCARD_UNUSABLE,
            "That card fits none of the melds you could make or lay off on this turn:"
            " a card taken from the discard pile must be used at once. Draw from the stock.",
        )
    threshold = state.options.opening_threshold
    raise RuleError(
        Reason.DISCARD_UNUSABLE,
        f"That card cannot go into an opening of {threshold} points this turn: a card"
        " taken from the discard pile before opening must be part of the opening."
        " Draw from the stock.",
    )


def discard_use(state: GameState, seat: int) -> Use | None:
    """How ``seat`` could use the top discard this turn if it took it: the actions,
    in order, after the take; None when it could not."""
    if not state.discard:
        return None
    card = state.discard[-1]
    return _use(state, seat, [*state.hands[seat], card], card)


def taken_card_use(state: GameState, seat: int) -> Use | None:
    """How ``seat`` could still use the card it took from the discard pile this
    turn (its next actions, as `discard_use` found them at the take); None when
    it took none or cannot."""
    if state.taken_discard < 0 or state.taken_discard not in state.hands[seat]:
        return None
    return _use(state, seat, state.hands[seat], state.taken_discard)


def _use(state: GameState, seat: int, hand: list[int], card: int) -> Use | None:
    """Actions, in order, that use ``card`` of ``hand`` this turn."""
    rules = state.ruleset
    if not state.opened[seat]:
        opening = find_opening(
            hand,
            rules,
            threshold=state.options.opening_threshold,
            exempt_left=rules.opening_exempt_left,
            keep_one=rules.must_discard_to_go_out,
            must_use=card,
        )
        if opening is None:
            return None
        return (Meld(tuple(_spec(m) for m in opening.melds)),)
    melds = list(state.melds)
    return (
        _lay_off_use(rules, hand, card, melds)
        or _swap_use(rules, hand, card, melds)
        or _meld_use(rules, hand, card)
        or _swap_first_use(rules, hand, card, melds)
    )


def _spec(shape: Shape) -> MeldSpec:
    return MeldSpec(shape.cards, kind=shape.kind)


def _keeps_one(rules: Ruleset, hand: Sequence[int], laid: int) -> bool:
    """Whether laying ``laid`` cards of ``hand`` leaves the card a discard needs."""
    return not rules.must_discard_to_go_out or laid < len(hand)


def _melds_with(rules: Ruleset, hand: Sequence[int], card: int) -> Iterator[MeldSpec]:
    """Melds of ``card`` with cards of ``hand`` (which holds it) that keep a card
    for the discard where one is needed. A candidate takes its cards from the whole
    hand, so it may hold the other copy of the card, or another joker: the card
    takes that one's place (the two are interchangeable)."""
    deck = rules.deck
    key = (deck.rank[card], deck.suit[card])
    for shape in candidates(hand, rules):
        twin = next((c for c in shape.cards if (deck.rank[c], deck.suit[c]) == key), -1)
        if twin >= 0 and _keeps_one(rules, hand, len(shape.cards)):
            yield MeldSpec(tuple(card if c == twin else c for c in shape.cards), kind=shape.kind)


def _meld_use(rules: Ruleset, hand: Sequence[int], card: int) -> Use | None:
    """A meld of ``card`` with cards of ``hand``."""
    spec = next(_melds_with(rules, hand, card), None)
    return None if spec is None else (Meld((spec,)),)


def _lay_off_use(
    rules: Ruleset, hand: Sequence[int], card: int, melds: Sequence[TableMeld]
) -> Use | None:
    """A lay-off of ``card`` on a table meld, alone or with bridging cards of ``hand``."""
    for meld in melds:
        for cards, side in _lay_offs(rules, hand, card, meld):
            if not _keeps_one(rules, hand, len(cards)):
                continue
            try:
                extend_meld(meld, cards, side, rules)
            except RuleError:
                continue
            return (LayOff(meld.id, cards, side),)
    return None


def _lay_offs(
    rules: Ruleset, hand: Sequence[int], card: int, meld: TableMeld
) -> Iterator[tuple[tuple[int, ...], Side]]:
    """The lay-offs worth trying for ``card`` on ``meld``, cards low to high."""
    if meld.kind == MeldKind.GROUP:
        yield (card,), Side.AUTO
        return
    deck = rules.deck
    rest = [c for c in hand if c != card]
    jokers = [c for c in rest if deck.is_joker(c)]
    held = {deck.rank[c] for c in rest if deck.suit[c] == meld.suit and not deck.is_joker(c)}

    def natural(position: int) -> int:
        rank = 1 if position == ACE_HIGH else position
        return next(c for c in rest if deck.suit[c] == meld.suit and deck.rank[c] == rank)

    def has(position: int) -> bool:
        return (1 if position == ACE_HIGH else position) in held

    low, high = meld.rank - 1, meld.rank + len(meld.cards)  # the places next to each end
    if deck.is_joker(card):
        # The joker at an end, or past the hand's cards that continue the run there.
        for side, start, step in ((Side.HIGH, high, 1), (Side.LOW, low, -1)):
            run: list[int] = []
            position = start
            while 1 <= position <= ACE_HIGH:
                placed = [*run, card]
                yield (tuple(placed) if step > 0 else tuple(reversed(placed))), side
                if not has(position):
                    break
                run.append(natural(position))
                position += step
        return
    if deck.suit[card] != meld.suit:
        return
    rank = deck.rank[card]
    for side, position, step in ((Side.HIGH, high, 1), (Side.LOW, low, -1)):
        target = ACE_HIGH if rank == 1 and step > 0 else rank
        if (target - position) * step < 0 or not 1 <= target <= ACE_HIGH:
            continue  # the card is not beyond this end
        bridge: list[int] = []
        spare = iter(jokers)
        for between in range(position, target, step):
            filler = natural(between) if has(between) else next(spare, -1)
            if filler < 0:
                break
            bridge.append(filler)
        else:
            placed = [*bridge, card]
            yield (tuple(placed) if step > 0 else tuple(reversed(placed))), side


def swaps(
    rules: Ruleset, hand: Sequence[int], meld: TableMeld, joker: int
) -> Iterator[tuple[int, int, TableMeld]]:
    """The swaps cards of ``hand`` make for ``joker`` of ``meld`` that the engine
    accepts: (card put in, second card or -1, the meld after)."""
    deck = rules.deck
    if rules.group_swap_completes and meld.kind == MeldKind.GROUP and len(meld.cards) == 3:
        same = [c for c in hand if deck.rank[c] == meld.rank]
        for i, first in enumerate(same):
            for second in same[i + 1 :]:
                try:
                    yield first, second, complete_group(meld, joker, (first, second), rules)
                except RuleError:
                    continue
        return
    targets = set(joker_targets(meld, joker, rules))
    for put in hand:
        if (deck.rank[put], deck.suit[put]) not in targets:
            continue
        try:
            yield put, -1, replace_joker(meld, joker, put, rules)
        except RuleError:
            continue


def _jokers(rules: Ruleset, meld: TableMeld) -> list[int]:
    return [c for c in meld.cards if rules.deck.is_joker(c)]


def _swap_use(
    rules: Ruleset, hand: Sequence[int], card: int, melds: Sequence[TableMeld]
) -> Use | None:
    """``card`` put in a joker's place (with a second card of ``hand`` that
    completes a `classic` brelan); the joker kept, or placed where it must be."""
    for meld in melds:
        for joker in _jokers(rules, meld):
            for put, second, _ in swaps(rules, hand, meld, joker):
                if card not in (put, second):
                    continue
                swap = SwapJoker(meld.id, joker, put, second=second)
                if not rules.retrieved_joker_must_be_melded:
                    return (swap,)
                left = [c for c in hand if c not in (put, second)]
                placed = _joker_placement(rules, left, joker, [m for m in melds if m is not meld])
                if placed is not None:
                    new_meld, laid = placed
                    return (SwapJoker(meld.id, joker, put, new_meld, laid, second),)
    return None


def _joker_placement(
    rules: Ruleset, hand: list[int], joker: int, melds: Sequence[TableMeld]
) -> tuple[MeldSpec | None, LayOff | None] | None:
    """Where a joker taken back goes at once: a meld with cards of ``hand``, or a
    lay-off on another table meld."""
    spec = next(_melds_with(rules, [*hand, joker], joker), None)
    if spec is not None:
        return spec, None
    for meld in melds:
        for cards, side in _lay_offs(rules, [*hand, joker], joker, meld):
            if not _keeps_one(rules, hand, len(cards) - 1):
                continue
            try:
                extend_meld(meld, cards, side, rules)
            except RuleError:
                continue
            return None, LayOff(meld.id, cards, side)
    return None


def _swap_first_use(
    rules: Ruleset, hand: Sequence[int], card: int, melds: Sequence[TableMeld]
) -> Use | None:
    """A joker taken back by another card of ``hand`` and kept, then the card melded
    or laid off with it (or on the meld the joker left)."""
    if rules.retrieved_joker_must_be_melded:
        return None
    rest = [c for c in hand if c != card]
    for index, meld in enumerate(melds):
        for joker in _jokers(rules, meld):
            for put, second, after in swaps(rules, rest, meld, joker):
                kept = [*(c for c in hand if c not in (put, second)), joker]
                table = [*melds[:index], after, *melds[index + 1 :]]
                then = _lay_off_use(rules, kept, card, table) or _meld_use(rules, kept, card)
                if then is not None:
                    return (SwapJoker(meld.id, joker, put, second=second), *then)
    return None
