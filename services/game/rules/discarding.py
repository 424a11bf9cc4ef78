"""The discard that ends a turn, and what it may not be: the card just taken from
the discard pile, before a taken card is used, or a joker where the rules forbid."""

from __future__ import annotations

from .actions import Discard
from .claims import close_claims
from .errors import Reason, RuleError
from .events import Event
from .guards import require_turn, take_from_hand
from .ruleset import JokerDiscard
from .state import GameState, Phase
from .turns import taken_card_owed, throw

Events = list[Event]


def discard(state: GameState, seat: int, action: Discard, now: int, events: Events) -> None:
    require_turn(state, seat, Phase.PLAY)
    left = take_from_hand(state.hands[seat], [action.card], state)
    rules = state.ruleset
    if action.card == state.taken_discard:
        raise RuleError(
            Reason.DISCARD_TAKEN_CARD,
            "You cannot throw back the card you just took from the discard pile.",
        )
    if taken_card_owed(state):
        but = " or put it back" if rules.reposer and not state.moved else ""
        raise RuleError(
            Reason.TAKEN_CARD_UNUSED,
            f"Use the card you took from the discard pile in a meld first{but}.",
        )
    last_only = rules.joker_discard is JokerDiscard.LAST_CARD_ONLY
    if rules.deck.is_joker(action.card) and left and last_only:
        raise RuleError(
            Reason.JOKER_DISCARD_FORBIDDEN,
            "A joker can only be discarded as your last card, to go out.",
        )
    close_claims(state, events)
    state.hands[seat].remove(action.card)
    throw(state, seat, action.card, False, now, events)
