"""What a round's scores must be, written from RULES.md (§2–§6) apart from the
engine's own scoring, for the property tests: each `RoundEnded` is checked
against the hands left, and a game ends with exactly one winner."""

from __future__ import annotations

from services.game.rules import GameState, Phase, SeatStatus, hand_penalty
from services.game.rules.events import EndReason, Event, GameEnded, RoundEnded
from services.game.rules.ruleset import Scoring


def _heaviness(state: GameState, seat: int) -> int:
    return hand_penalty(state.hands[seat], state.ruleset)


def check_round_scores(before: GameState, after: GameState, event: RoundEnded) -> None:
    """``event``'s points are what the rule set scores for the hands left in
    ``after`` (the seats that played the round are those playing in ``before``)."""
    rules = after.ruleset
    seats = [s for s in range(before.seats) if before.status[s] == SeatStatus.PLAYING]
    hand = {s: _heaviness(after, s) for s in seats}
    winner, points = event.winner, event.penalties
    assert all(points[s] == 0 for s in range(after.seats) if s not in seats), points
    if winner < 0:  # `contract` at the turn cap: nobody went out, everybody pays
        assert not rules.cap_has_winner and event.reason == EndReason.TURN_CAP
        assert all(points[s] == hand[s] for s in seats), (points, hand)
        return
    assert winner in seats
    if event.reason == EndReason.WENT_OUT:
        assert after.hands[winner] == []
    else:  # blocked or capped: the lightest hand wins, ties to the lowest seat
        assert winner == min(seats, key=lambda s: (hand[s], s)), (winner, hand)
    others = [s for s in seats if s != winner]
    factor = 2 if event.doubled else 1
    if rules.scoring is Scoring.EACH_PAYS:
        assert not event.doubled
        assert points[winner] == 0 and all(points[s] == hand[s] for s in others)
    elif rules.scoring is Scoring.WINNER_COLLECTS:
        if event.reason == EndReason.WENT_OUT:
            assert points[winner] == factor * sum(hand[s] for s in others)
        else:
            assert not event.doubled
            assert points[winner] == sum(hand[s] - hand[winner] for s in others)
        assert all(points[s] == 0 for s in others)
    else:
        assert rules.scoring is Scoring.CLASSIC
        assert points[winner] == -10 * factor
        deck = rules.deck
        for s in others:
            joker = 2 if any(deck.is_joker(c) for c in after.hands[s]) else 1
            assert points[s] == hand[s] * factor * joker, (s, points, hand)


def check_game_end(after: GameState, events: list[Event]) -> None:
    """A game that ends (with these events) has exactly one winner, a seat of
    the table, told once."""
    ended = [e for e in events if isinstance(e, GameEnded)]
    if after.phase != Phase.GAME_OVER:
        assert not ended
        return
    assert len(ended) == 1
    assert 0 <= after.winner < after.seats and ended[0].winner == after.winner
