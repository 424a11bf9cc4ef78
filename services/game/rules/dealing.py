"""The deal: the table (``SYSTEM``) deals a round from a given deck order, and
the first player in play order after the dealer begins."""

from __future__ import annotations

from .actions import SYSTEM, Deal
from .errors import Reason, RuleError
from .events import Event, RoundDealt
from .fairness import commitment
from .state import GameState, Phase, SeatStatus
from .turns import begin_turn

Events = list[Event]


def deal(state: GameState, seat: int, action: Deal, now: int, events: Events) -> None:
    if seat != SYSTEM:
        raise RuleError(Reason.NOT_YOUR_TURN, "Only the table deals.")
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    if state.phase != Phase.DEAL:
        raise RuleError(Reason.ROUND_IN_PLAY, "A round is already in play.")
    rules = state.ruleset
    if sorted(action.order) != list(rules.deck.ids()):
        raise RuleError(Reason.DECK_INVALID, "The deck order must hold every card exactly once.")
    players = seats_from(state, state.dealer + 1)
    state.stock = list(reversed(action.order))
    state.hands = [[] for _ in range(state.seats)]
    for _ in range(rules.cards_dealt(state.round_no + 1)):
        for s in players:
            state.hands[s].append(state.stock.pop())
    state.discard = [state.stock.pop()]
    state.top_discarder = -1
    state.melds = []
    state.opened = [False] * state.seats
    state.next_meld_id = 1
    state.reshuffles = 0
    state.seed = action.seed
    state.round_no += 1
    state.turn = 0
    state.claim_card = -1
    state.claimants = []
    state.deal_order = tuple(action.order)
    state.deal_salt = action.salt.hex()
    events.append(
        RoundDealt(
            state.round_no,
            state.dealer,
            tuple(tuple(h) for h in state.hands),
            state.discard[-1],
            len(state.stock),
            commitment(action.order, action.seed, action.salt),
        )
    )
    begin_turn(state, players[0], now, events)


def seats_from(state: GameState, start: int) -> list[int]:
    order = [(start + i) % state.seats for i in range(state.seats)]
    return [s for s in order if state.status[s] == SeatStatus.PLAYING]
