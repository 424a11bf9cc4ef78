"""The moves open to a seat, for client tools, hints and the random player."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from .actions import (
    Action,
    Claim,
    Discard,
    DrawStock,
    LayOff,
    Meld,
    MeldSpec,
    Reposer,
    SwapJoker,
    TakeDiscard,
)
from .cards import JOKER
from .claims import may_claim
from .finder import candidates
from .melds import MeldKind, fits, joker_targets
from .plans import contract_plan, melds_to_lay, opening_ok
from .ruleset import JokerDiscard, Reshuffle
from .state import GameState, Phase, SeatStatus
from .taking import can_take, swaps, taken_card_use
from .turns import taken_card_owed


def can_draw_stock(state: GameState) -> bool:
    """DrawStock would be accepted (it may rebuild the stock, or block a `rami51` deal)."""
    rules = state.ruleset
    limit = rules.max_reshuffles
    pile = 2 if rules.reshuffle is Reshuffle.KEEP_TOP else 1
    reshuffle_ok = len(state.discard) >= pile and (limit is None or state.reshuffles < limit)
    return bool(state.stock) or reshuffle_ok or rules.blocked_deal


def discardable(state: GameState, hand: Sequence[int]) -> list[int]:
    """The cards of ``hand`` the current seat may discard."""
    rules = state.ruleset
    if taken_card_owed(state):
        return []
    keep_jokers = rules.joker_discard is JokerDiscard.LAST_CARD_ONLY and len(hand) > 1
    rank, taken = rules.deck.rank, state.taken_discard
    return [c for c in hand if c != taken and not (keep_jokers and rank[c] == JOKER)]


def joker_swaps(state: GameState, seat: int) -> Iterator[SwapJoker]:
    """Joker swaps with a card of the hand, the joker going onto another table meld."""
    rules = state.ruleset
    deck = rules.deck
    for meld in state.melds:
        if rules.group_swap_completes and meld.kind == MeldKind.GROUP and len(meld.cards) == 3:
            continue
        for joker in (c for c in meld.cards if deck.is_joker(c)):
            targets = set(joker_targets(meld, joker, rules))
            for card in state.hands[seat]:
                if (deck.rank[card], deck.suit[card]) not in targets:
                    continue
                for other in state.melds:
                    side = fits(other, joker, rules) if other.id != meld.id else None
                    if side is not None:
                        yield SwapJoker(
                            meld.id, joker, card, lay_off=LayOff(other.id, (joker,), side)
                        )


def kept_joker_swaps(state: GameState, seat: int) -> Iterator[SwapJoker]:
    """Joker swaps whose joker stays in hand, where the rules let it stay (`classic`):
    a joker of a run or a carré for the card it stands for, a brelan's for both
    missing cards. Before the opening (`classic` needs none to swap) never with the
    card taken from the discard pile, which goes into the opening."""
    rules = state.ruleset
    if rules.retrieved_joker_must_be_melded:
        return
    if not state.opened[seat] and rules.swap_needs_opening:
        return
    hand = state.hands[seat]
    if not state.opened[seat] and taken_card_owed(state):
        hand = [c for c in hand if c != state.taken_discard]
    deck = rules.deck
    for meld in state.melds:
        for joker in (c for c in meld.cards if deck.is_joker(c)):
            for put, second, _ in swaps(rules, hand, meld, joker):
                yield SwapJoker(meld.id, joker, put, second=second)


def legal_actions(state: GameState, seat: int) -> list[Action]:
    """Every single-step move ``seat`` may make now: the draws; each meld of its hand
    laid alone (or the deal's whole contract); each card laid off alone; each joker
    swap whose joker goes onto another meld, and, where it may stay in hand, each
    swap that keeps it (in `classic` before the opening too); while a card taken from the discard
    pile must still be used, the first move of a way to use it (an opening of
    several melds, a lay-off with other cards, a joker kept...); putting a taken
    discard back; each discard; a claim when another seat passed over the discard.
    (Several melds may also go down in one action.)"""
    if state.phase not in (Phase.DRAW, Phase.PLAY) or state.status[seat] != SeatStatus.PLAYING:
        return []
    if seat != state.current:
        return [Claim(state.claim_card)] if may_claim(state, seat) else []
    if state.phase == Phase.DRAW:
        draws: list[Action] = []
        if can_draw_stock(state):
            draws.append(DrawStock())
        if can_take(state, seat):
            draws.append(TakeDiscard())
        return draws
    rules = state.ruleset
    hand = state.hands[seat]
    keep = rules.must_discard_to_go_out
    moves: list[Action] = []
    contract = state.contract()
    if contract is not None and not state.opened[seat]:
        plan = contract_plan(hand, contract, state)
        if plan:
            moves.append(Meld(tuple(MeldSpec(m.cards) for m in plan)))
    else:
        owed = taken_card_owed(state)
        for shape in candidates(hand, rules):
            rest = [c for c in hand if c not in shape.cards]
            if keep and not rest:
                continue
            if not opening_ok(state, seat, [shape], len(rest)):
                continue
            if owed and not state.opened[seat] and state.taken_discard not in shape.cards:
                continue
            moves.append(Meld((MeldSpec(shape.cards),)))
    if state.opened[seat] and not (keep and len(hand) <= 1):
        for card in hand:
            for meld in state.melds:
                side = fits(meld, card, rules)
                if side is not None:
                    moves.append(LayOff(meld.id, (card,), side))
        moves.extend(joker_swaps(state, seat))
    moves.extend(m for m in kept_joker_swaps(state, seat) if m not in moves)
    if taken_card_owed(state):
        use = taken_card_use(state, seat)
        if use is not None and use[0] not in moves:
            moves.append(use[0])
        if rules.reposer and not state.moved:
            moves.append(Reposer())
    moves.extend(Discard(c) for c in discardable(state, hand))
    return moves


def move_kinds(state: GameState, seat: int) -> set[type[Action]]:
    """The kinds of move ``seat`` may make now: those of `legal_actions`, and a
    `Meld` too where the hand holds melds the engine takes only together (an
    opening of several)."""
    kinds = {type(a) for a in legal_actions(state, seat)}
    playing = state.current == seat and state.phase == Phase.PLAY
    if playing and Meld not in kinds and melds_to_lay(state, seat, state.hands[seat]):
        kinds.add(Meld)
    return kinds
