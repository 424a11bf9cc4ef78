"""The turn clock: beginning and ending turns, the turn cap, and what a timeout does."""

from __future__ import annotations

from .events import CardAnnounced, Discarded, EndReason, Event, TurnBegan, TurnPassed
from .rounds import end_round, lightest_hand
from .ruleset import Scoring, TakenDiscard
from .scoring import card_penalty
from .state import GameState, Phase

Events = list[Event]


def begin_turn(state: GameState, seat: int, now: int, events: Events) -> None:
    state.current = seat
    state.phase = Phase.DRAW
    state.turn += 1
    state.deadline_ms = now + state.options.turn_timer_ms
    state.taken_discard = state.drawn = -1
    state.began_opened = state.opened[seat]
    state.moved = state.taken_used = state.reposed = False
    events.append(TurnBegan(seat, state.turn, state.deadline_ms))


def end_turn(state: GameState, now: int, events: Events) -> None:
    if state.turn >= state.options.turn_cap:
        cap_round(state, events)
        return
    begin_turn(state, state.next_playing(state.current), now, events)


def cap_round(state: GameState, events: Events) -> None:
    """RULES.md section 6: the capped round is scored per rule set."""
    rules = state.ruleset
    if not rules.cap_has_winner:
        end_round(state, -1, EndReason.TURN_CAP, events)
    elif rules.scoring is Scoring.WINNER_COLLECTS:
        end_round(state, lightest_hand(state), EndReason.BLOCKED, events)
    else:
        end_round(state, lightest_hand(state), EndReason.TURN_CAP, events)


def taken_card_owed(state: GameState) -> bool:
    """The card taken from the discard pile this turn still has to be used."""
    if state.taken_discard < 0 or state.taken_used:
        return False
    rule = state.ruleset.taken_discard
    if rule is TakenDiscard.USE_THIS_TURN:
        return True
    return rule is TakenDiscard.USE_IN_OPENING and not state.opened[state.current]


def auto_discard_choice(state: GameState) -> int:
    """RULES.md `cafe` decision: the highest-penalty non-joker card, never the card
    taken from the discard pile this turn; ties go to the card drawn this turn,
    then to the lowest id. -1 when no card qualifies (the turn then just passes)."""
    rules = state.ruleset
    best, best_key = -1, (-1, 0, 0)
    for card in state.hands[state.current]:
        if rules.deck.is_joker(card) or card == state.taken_discard:
            continue
        key = (card_penalty(card, rules), card == state.drawn, -card)
        if key > best_key:
            best, best_key = card, key
    return best


def turn_timeout(state: GameState, now: int, events: Events, reason: str = "timeout") -> None:
    """Before the draw the turn passes; after it one card is discarded for the seat,
    unless a taken discard had to be used: it goes back and the turn passes.
    ``reason`` names why the clock ran out, for a turn that passes."""
    current = state.current
    if state.phase == Phase.PLAY and taken_card_owed(state):
        state.hands[current].remove(state.taken_discard)
        state.discard.append(state.taken_discard)
        state.taken_discard = state.top_discarder = -1
        events.append(TurnPassed(current, reason))
        end_turn(state, now, events)
        return
    card = auto_discard_choice(state) if state.phase == Phase.PLAY else -1
    if card < 0:
        events.append(TurnPassed(current, reason))
        end_turn(state, now, events)
        return
    state.hands[current].remove(card)
    throw(state, current, card, True, now, events)


def throw(state: GameState, seat: int, card: int, auto: bool, now: int, events: Events) -> None:
    """``card``, already out of the hand, goes on the discard pile; the turn ends."""
    state.discard.append(card)
    state.top_discarder = seat
    events.append(Discarded(seat, card, auto))
    announce(state, seat, events)
    if not state.hands[seat]:
        end_round(state, seat, EndReason.WENT_OUT, events)
    else:
        end_turn(state, now, events)


def announce(state: GameState, seat: int, events: Events) -> None:
    """`classic`'s "Carte !": said for the player the moment one card is left."""
    if state.ruleset.announce_last_card and len(state.hands[seat]) == 1:
        events.append(CardAnnounced(seat))
