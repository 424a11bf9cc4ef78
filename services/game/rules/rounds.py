"""The end of a round (scoring by rule set) and of the game."""

from __future__ import annotations

from .events import (
    BoughtBack,
    DeckRevealed,
    EndReason,
    Event,
    GameEnded,
    PlayerEliminated,
    RoundEnded,
)
from .ruleset import Scoring
from .scoring import hand_penalty
from .state import GameState, Phase, RoundResult, SeatStatus

Events = list[Event]


def lightest_hand(state: GameState) -> int:
    """Smallest hand penalty among playing seats; ties go to the lowest seat."""
    return min(state.playing(), key=lambda s: (hand_penalty(state.hands[s], state.ruleset), s))


def _holds_joker(state: GameState, seat: int) -> bool:
    return any(state.ruleset.deck.is_joker(c) for c in state.hands[seat])


def doubled(state: GameState, reason: EndReason) -> bool:
    """Whether the round's scores are doubled: "rami d'un coup" (`rami51`) or "rami
    sec" (`classic`), out in a turn begun without having opened."""
    in_one_go = reason == EndReason.WENT_OUT and not state.began_opened
    return in_one_go and state.ruleset.scoring in (Scoring.WINNER_COLLECTS, Scoring.CLASSIC)


def round_points(state: GameState, winner: int, reason: EndReason) -> list[int]:
    """What each seat scores this round (RULES.md sections 2-6)."""
    rules = state.ruleset
    points = [0] * state.seats
    seats = state.playing()
    hand = {s: hand_penalty(state.hands[s], rules) for s in seats}
    factor = 2 if doubled(state, reason) else 1
    if rules.scoring is Scoring.WINNER_COLLECTS:
        if reason == EndReason.WENT_OUT:
            points[winner] = sum(hand[s] for s in seats if s != winner) * factor
        else:
            points[winner] = sum(hand[s] - hand[winner] for s in seats if s != winner)
    elif rules.scoring is Scoring.CLASSIC:
        for s in seats:
            if s == winner:
                points[s] = -10 * factor
            else:
                points[s] = hand[s] * factor * (2 if _holds_joker(state, s) else 1)
    else:
        for s in seats:
            if s != winner:
                points[s] = hand[s]
    return points


def end_round(state: GameState, winner: int, reason: EndReason, events: Events) -> None:
    """Score the round; ``winner`` is -1 when nobody won (a capped `contract` deal)."""
    points = tuple(round_points(state, winner, reason))
    twice = doubled(state, reason)
    for s in range(state.seats):
        state.totals[s] += points[s]
    totals = tuple(state.totals)
    hands = tuple(tuple(hand) for hand in state.hands)
    state.results.append(
        RoundResult(state.round_no, winner, reason.value, points, totals, twice, hands)
    )
    state.deadline_ms = 0
    state.taken_discard = state.drawn = state.claim_card = -1
    state.claimants = []
    events.append(RoundEnded(state.round_no, winner, reason, points, totals, twice, hands))
    events.append(DeckRevealed(state.round_no, state.deal_order, state.seed, state.deal_salt))
    _after_round(state, events)


def standing(state: GameState, seat: int) -> int:
    """How a seat's total compares: lower is better (points won count down)."""
    total = state.totals[seat]
    return -total if state.ruleset.scoring is Scoring.WINNER_COLLECTS else total


def final_places(state: GameState) -> dict[int, int]:
    """Every seat's place once the game is over: 0 for the winner, then the seats
    still playing by their totals (equal totals share a place), then every seat
    that left or was eliminated, all sharing the last place."""
    playing = state.playing()
    ahead = 1 if state.winner in playing else 0
    others = [s for s in playing if s != state.winner]
    places = {s: len(playing) for s in range(state.seats)}
    if ahead:
        places[state.winner] = 0
    for s in others:
        places[s] = ahead + sum(standing(state, o) < standing(state, s) for o in others)
    return places


def best_placed(state: GameState, seats: list[int]) -> int:
    """The one of ``seats`` whose total is best (the lowest seat on equal totals)."""
    return min(seats, key=lambda s: (standing(state, s), s))


def _after_round(state: GameState, events: Events) -> None:
    options = state.options
    if options.target_score:
        if max(state.totals[s] for s in state.playing()) >= options.target_score:
            end_game(state, best_placed(state, state.playing()), EndReason.TARGET_REACHED, events)
            return
    elif options.elimination_cap > 0:
        if _eliminate(state, events):
            return
    elif state.round_no >= options.rounds:
        end_game(state, best_placed(state, state.playing()), EndReason.ROUNDS_PLAYED, events)
        return
    state.phase = Phase.DEAL
    state.dealer = state.next_playing(state.dealer)


def _eliminate(state: GameState, events: Events) -> bool:
    """Apply the cap (with `classic` buy-backs); True when the game is over.

    Decision: RULES.md lets a player buy back in; the buy-in money is out of
    scope, so buying back costs nothing and every player who may, does. One who
    would rather stop leaves the table (`Leave`)."""
    cap = state.options.elimination_cap
    reached = [s for s in state.playing() if state.totals[s] >= cap]
    still = [s for s in state.playing() if s not in reached]
    for s in reached:
        if still and state.buy_backs[s] < state.options.buy_backs:
            # Back in, at the highest score among the players still in the game.
            state.buy_backs[s] += 1
            state.totals[s] = max(state.totals[t] for t in still)
            events.append(BoughtBack(s, state.totals[s], state.buy_backs[s]))
            continue
        state.status[s] = SeatStatus.ELIMINATED
        events.append(PlayerEliminated(s, state.totals[s]))
    left = state.playing()
    if len(left) <= 1:
        pool = left or reached
        end_game(
            state, min(pool, key=lambda s: (state.totals[s], s)), EndReason.LAST_STANDING, events
        )
        return True
    return False


def end_game(
    state: GameState, winner: int, reason: EndReason, events: Events, note: str = ""
) -> None:
    """End the game (``winner`` -1: nobody won). One that ends during a round
    (everybody else left) opens that round's deck commitment too: every dealt
    deck is shown in the end."""
    dealt = state.deal_order and all(r.round_no != state.round_no for r in state.results)
    if dealt:
        events.append(DeckRevealed(state.round_no, state.deal_order, state.seed, state.deal_salt))
    state.phase = Phase.GAME_OVER
    state.winner = winner
    state.end_reason = reason.value
    state.end_note = note
    state.deadline_ms = 0
    state.claim_card = -1
    events.append(GameEnded(winner, reason, tuple(state.totals), note))
