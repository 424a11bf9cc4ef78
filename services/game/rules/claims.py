"""Claims ("Puis-je ?", in `contract`): claiming the discard the player holding
the turn passed over, and settling the claim window.

Seed 004: « Le mécanisme se répète tant que la carte de défausse suivante
intéresse quelqu'un. » RULES.md decisions: the next discard card is the next
turn's, so one claim at most is settled per stock draw (the card a claim
uncovers is not offered); and the seat that discarded the card on offer may
not claim it back."""

from __future__ import annotations

from .actions import Claim
from .dealing import seats_from
from .drawing import rebuild_stock
from .errors import Reason, RuleError
from .events import Claimed, ClaimMade, ClaimWindowClosed, Event
from .guards import require_seat
from .state import GameState, SeatStatus

Events = list[Event]


def claim(state: GameState, seat: int, action: Claim, now: int, events: Events) -> None:
    require_seat(state, seat)
    deck = state.ruleset.deck
    if not state.ruleset.claims:
        raise RuleError(Reason.RULE_NOT_IN_PLAY, "Claiming the discard is not in these rules.")
    if not deck.is_card(action.card):
        raise RuleError(Reason.CARD_UNKNOWN, f"There is no card {action.card} in this game.")
    if state.claim_card < 0 or now >= state.claim_deadline_ms:
        # Most often a lost race: the window the claimant saw shut on the way.
        raise RuleError(
            Reason.CLAIM_WINDOW_CLOSED, "The claim window has closed: no discard is on offer now."
        )
    if action.card != state.claim_card:
        # The claimant saw an earlier window: asking for the card on offer now
        # would claim a card they never chose.
        raise RuleError(
            Reason.CLAIM_CARD_CHANGED,
            f"The card on offer is now {deck.code(state.claim_card)}: look again before"
            " you claim it.",
        )
    if seat == state.current:
        raise RuleError(Reason.CLAIM_NOT_ALLOWED, "You passed over that card yourself.")
    if seat == state.top_discarder:
        raise RuleError(
            Reason.CLAIM_NOT_ALLOWED, "You discarded that card: you cannot claim it back."
        )
    if seat in state.claimants:
        raise RuleError(Reason.CLAIM_NOT_ALLOWED, "You have already claimed it.")
    state.claimants.append(seat)
    events.append(ClaimMade(seat))


def may_claim(state: GameState, seat: int) -> bool:
    """Whether ``seat`` may claim the card on offer now (the clock aside): a window
    is open, and the seat plays, does not hold the turn, did not discard the card
    and has not claimed it yet."""
    return (
        state.claim_card >= 0
        and 0 <= seat < state.seats
        and state.status[seat] == SeatStatus.PLAYING
        and seat not in (state.current, state.top_discarder)
        and seat not in state.claimants
    )


def close_claims(state: GameState, events: Events) -> None:
    """Settle the window by the rule, not by arrival: the claimant nearest to the
    active player in play order takes the card and one penalty card. A window
    nobody takes a card from closes with an event too: watchers learn it shut."""
    if state.claim_card < 0:
        return
    card, claimants = state.claim_card, set(state.claimants)
    state.claim_card, state.claimants = -1, []
    winner = next((s for s in seats_from(state, state.current + 1) if s in claimants), None)
    if winner is None or not state.discard or state.discard[-1] != card:
        events.append(ClaimWindowClosed(card))
        return
    state.discard.pop()
    state.top_discarder = -1
    penalty = -1
    if state.stock or rebuild_stock(state, events):
        penalty = state.stock.pop()
        state.hands[winner].append(penalty)
    state.hands[winner].append(card)
    events.append(Claimed(winner, card, penalty))
