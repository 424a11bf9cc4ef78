"""Whether a seat may take the top of the discard pile where the card taken
must be used the same turn (`classic`: "seulement si la carte piochée dans la
défausse permet au joueur de poser"). A card the seat could not use would leave
it with no legal move: no discard (the card is owed), no Reposer in `classic`.

The check refuses only what is certain: a card in no meld the hand could make
with it, nor any table meld it could join (after opening); before opening, melds of every card
that could go down with it worth less than the threshold even at each card's
highest value. A take that passes may still end in a turn that times out (the
card then goes back), never in a refusal of a move that was possible."""

from __future__ import annotations

from .cards import JOKER
from .errors import Reason, RuleError
from .finder import candidates, find_melds
from .melds import MeldKind, fits
from .ruleset import TakenDiscard
from .state import GameState

HIGHEST_OPENING_VALUE = 11
"""What any card can count in an opening at most (an ace high; a joker stands for one)."""


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
    card = state.discard[-1]
    hand = [*state.hands[seat], card]
    in_meld = any(card in shape.cards for shape in candidates(hand, rules))
    if state.opened[seat]:
        if not (in_meld or _may_join(state, card)):
            raise RuleError(
                Reason.DISCARD_UNUSABLE,
                "That card fits none of the melds you could make or lay off on this turn:"
                " a card taken from the discard pile must be used at once. Draw from the stock.",
            )
        return
    threshold = state.options.opening_threshold
    if not in_meld or _opening_bound(state, hand) < threshold:
        raise RuleError(
            Reason.DISCARD_UNUSABLE,
            f"That card cannot go into an opening of {threshold} points this turn: a card"
            " taken from the discard pile before opening must be part of the opening."
            " Draw from the stock.",
        )


def _may_join(state: GameState, card: int) -> bool:
    """Whether ``card`` could go onto a table meld, alone or laid off with other
    cards of the hand (TS and JS onto 7S 8S 9S), or free one of its jokers: a
    group of its rank, a run of its suit, any meld holding a joker, or a joker."""
    rules = state.ruleset
    deck = rules.deck
    if deck.rank[card] == JOKER:
        return bool(state.melds)
    for meld in state.melds:
        if fits(meld, card, rules) is not None or any(deck.rank[c] == JOKER for c in meld.cards):
            return True
        if meld.kind == MeldKind.GROUP and meld.rank == deck.rank[card]:
            return True
        if meld.kind == MeldKind.RUN and meld.suit == deck.suit[card]:
            return True
    return False


def _opening_bound(state: GameState, hand: list[int]) -> int:
    """At least the points of any opening ``hand`` could make: the finder's melds
    leave the least penalty, so they lay the most cards by penalty; a card's penalty
    is at least its opening value wherever the rule set makes it so (jokers and aces
    at 11 or more), else every card counts its highest value."""
    rules = state.ruleset
    penalties = rules.penalties
    if penalties.joker >= HIGHEST_OPENING_VALUE and penalties.ace >= HIGHEST_OPENING_VALUE:
        found = find_melds(hand, rules)
        laid = [c for m in found.melds for c in m.cards]
        return sum(penalties.of_rank(rules.deck.rank[c]) for c in laid)
    return HIGHEST_OPENING_VALUE * len(hand)
