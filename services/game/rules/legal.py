"""The moves open to a seat, for client tools, hints and the random player."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from .actions import Action, Discard, DrawStock, LayOff, Meld, MeldSpec, SwapJoker, TakeDiscard
from .cards import JOKER
from .finder import candidates
from .melds import fits, joker_targets
from .ruleset import JokerDiscard
from .scoring import meld_points
from .state import GameState, Phase, SeatStatus


def can_draw_stock(state: GameState) -> bool:
    limit = state.ruleset.max_reshuffles
    reshuffle_ok = len(state.discard) >= 2 and (limit is None or state.reshuffles < limit)
    return bool(state.stock) or reshuffle_ok


def discardable(state: GameState, hand: Sequence[int]) -> list[int]:
    """The cards of ``hand`` the current seat may discard."""
    rules = state.ruleset
    keep_jokers = rules.joker_discard is JokerDiscard.LAST_CARD_ONLY and len(hand) > 1
    rank, taken = rules.deck.rank, state.taken_discard
    return [c for c in hand if c != taken and not (keep_jokers and rank[c] == JOKER)]


def joker_swaps(state: GameState, seat: int) -> Iterator[SwapJoker]:
    """Joker swaps with a card of the hand, the joker going onto another table meld."""
    rules = state.ruleset
    deck = rules.deck
    for meld in state.melds:
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


def legal_actions(state: GameState, seat: int) -> list[Action]:
    """Every single-step move ``seat`` may make now: the draws; each meld of its hand
    laid alone; each card laid off alone; each joker swap whose joker goes onto
    another meld; each discard. (Several melds may also go down in one action.)"""
    if (
        state.phase not in (Phase.DRAW, Phase.PLAY)
        or seat != state.current
        or state.status[seat] != SeatStatus.PLAYING
    ):
        return []
    if state.phase == Phase.DRAW:
        draws: list[Action] = []
        if can_draw_stock(state):
            draws.append(DrawStock())
        if state.discard:
            draws.append(TakeDiscard())
        return draws
    rules = state.ruleset
    hand = state.hands[seat]
    keep = rules.must_discard_to_go_out
    moves: list[Action] = []
    threshold = 0 if state.opened[seat] else rules.opening_threshold
    for shape in candidates(hand, rules):
        rest = [c for c in hand if c not in shape.cards]
        if keep and not rest:
            continue
        if len(rest) > 1 and meld_points(shape, rules) < threshold:
            continue
        moves.append(Meld((MeldSpec(shape.cards),)))
    if state.opened[seat] and not (keep and len(hand) <= 1):
        for card in hand:
            for meld in state.melds:
                side = fits(meld, card, rules)
                if side is not None:
                    moves.append(LayOff(meld.id, (card,), side))
        moves.extend(joker_swaps(state, seat))
    moves.extend(Discard(c) for c in discardable(state, hand))
    return moves
