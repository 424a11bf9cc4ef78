"""The draw phase: from the stock (rebuilt from the discard pile when the rules
allow, or a blocked deal when they do not), from the discard pile, and putting a
taken discard back (``reposer``)."""

from __future__ import annotations

import random

from .errors import Reason, RuleError
from .events import ClaimWindowOpened, Drew, EndReason, Event, Reposed, Reshuffled
from .guards import require_turn
from .rounds import end_round, lightest_hand
from .ruleset import Reshuffle
from .state import GameState, Phase
from .taking import check_take_usable
from .turns import taken_card_owed

Events = list[Event]


def rebuild_stock(state: GameState, events: Events) -> bool:
    """Turn the discard pile into a new stock; False when the rules or the pile forbid."""
    rules = state.ruleset
    limit = rules.max_reshuffles
    keep_top = rules.reshuffle is Reshuffle.KEEP_TOP
    if len(state.discard) < (2 if keep_top else 1) or (
        limit is not None and state.reshuffles >= limit
    ):
        return False
    stock = state.discard[:-1] if keep_top else state.discard[:]
    state.discard = state.discard[-1:] if keep_top else []
    if not keep_top:
        state.top_discarder = -1
    random.Random(state.seed * 1009 + state.reshuffles).shuffle(stock)
    state.stock = stock
    state.reshuffles += 1
    top = state.discard[-1] if state.discard else -1
    events.append(Reshuffled(len(stock), top, state.reshuffles))
    return True


def stock_spent(state: GameState) -> bool:
    """The stock is empty and may not be rebuilt again (`rami51` after two
    reshuffles), where that blocks the deal."""
    limit = state.ruleset.max_reshuffles
    return (
        state.ruleset.blocked_deal
        and not state.stock
        and limit is not None
        and state.reshuffles >= limit
    )


def draw_stock(state: GameState, seat: int, now: int, events: Events) -> None:
    require_turn(state, seat, Phase.DRAW)
    if not state.stock and not rebuild_stock(state, events):
        if state.ruleset.blocked_deal:
            end_round(state, lightest_hand(state), EndReason.BLOCKED, events)
            return
        raise RuleError(Reason.STOCK_EMPTY, "The stock is empty: take the discard.")
    card = state.stock.pop()
    state.drawn = card
    state.hands[seat].append(card)
    state.phase = Phase.PLAY
    events.append(Drew(seat, card, False, len(state.stock)))
    if stock_spent(state):
        # RULES.md `rami51` decision: « si la pioche s'épuise une troisième fois »
        # the deal is blocked now, not when someone next draws from the empty
        # stock: nobody plays on by taking discards in between.
        end_round(state, lightest_hand(state), EndReason.BLOCKED, events)
        return
    if state.ruleset.claims and state.discard:
        state.claim_card = state.discard[-1]
        state.claim_deadline_ms = now + state.options.claim_window_ms
        state.claimants = []
        events.append(ClaimWindowOpened(state.claim_card, state.claim_deadline_ms))


def take_discard(state: GameState, seat: int, events: Events) -> None:
    require_turn(state, seat, Phase.DRAW)
    if state.reposed:
        raise RuleError(Reason.REPOSER_NOT_ALLOWED, "You put that card back: draw from the stock.")
    if not state.discard:
        raise RuleError(Reason.DISCARD_EMPTY, "The discard pile is empty: draw from the stock.")
    check_take_usable(state, seat)
    card = state.discard.pop()
    state.top_discarder = -1
    state.taken_discard = state.drawn = card
    state.hands[seat].append(card)
    state.phase = Phase.PLAY
    events.append(Drew(seat, card, True, len(state.stock)))


def reposer(state: GameState, seat: int, events: Events) -> None:
    require_turn(state, seat, Phase.PLAY)
    if not state.ruleset.reposer:
        raise RuleError(Reason.RULE_NOT_IN_PLAY, "Putting the discard back is not in these rules.")
    if not taken_card_owed(state) or state.moved:
        raise RuleError(
            Reason.REPOSER_NOT_ALLOWED,
            "Only a discard you took before opening goes back, and before any other move.",
        )
    card = state.taken_discard
    state.hands[seat].remove(card)
    state.discard.append(card)
    state.taken_discard = state.drawn = state.top_discarder = -1
    state.reposed = True
    state.phase = Phase.DRAW
    events.append(Reposed(seat, card))
