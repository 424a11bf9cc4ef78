"""The table clock's ``Timeout``: a claim window's end, a turn's end, and the
player who can certainly do nothing (``no_move``), whose turn is over at once."""

from __future__ import annotations

from .actions import SYSTEM
from .claims import close_claims
from .errors import Reason, RuleError
from .events import Event
from .finder import candidates
from .legal import discardable, legal_actions
from .state import GameState, Phase
from .turns import turn_timeout

Events = list[Event]


def no_move(state: GameState) -> bool:
    """The player holding the turn after the draw can certainly do nothing: no
    card may be discarded (only jokers, or only a card that must be used first),
    the hand holds no meld at all, no joker on the table could be taken (by a
    natural card of the hand), and no lay-off or put-back is open. A hand that
    holds a meld may need several laid together to open: it is left to the
    clock. Cheap unless nothing may be discarded."""
    seat = state.current
    hand = state.hands[seat]
    if discardable(state, hand) or candidates(hand, state.ruleset):
        return False
    deck = state.ruleset.deck
    naturals = not all(deck.is_joker(c) for c in hand)
    if (
        state.opened[seat]
        and naturals
        and any(deck.is_joker(c) for m in state.melds for c in m.cards)
    ):
        return False
    return not legal_actions(state, seat)


def timeout(state: GameState, seat: int, now: int, events: Events) -> None:
    if seat != SYSTEM:
        raise RuleError(Reason.NOT_YOUR_TURN, "Only the table clock ends a turn.")
    if state.phase not in (Phase.DRAW, Phase.PLAY):
        raise RuleError(Reason.NO_ROUND_IN_PLAY, "No turn is in play.")
    claims_due = state.claim_card >= 0 and now >= state.claim_deadline_ms
    if now < state.deadline_ms and not claims_due:
        raise RuleError(Reason.TIMEOUT_NOT_DUE, "The turn has time left.")
    close_claims(state, events)
    if now >= state.deadline_ms:
        stuck = state.phase == Phase.PLAY and no_move(state)
        turn_timeout(state, now, events, "no_move" if stuck else "timeout")
