"""A player leaving the table: the seat stops playing, its turn passes, and the
last one still playing wins the game."""

from __future__ import annotations

from .actions import SYSTEM
from .claims import close_claims
from .errors import Reason, RuleError
from .events import EndReason, Event, PlayerLeft, TurnPassed
from .rounds import best_placed, end_game
from .state import GameState, Phase, SeatStatus
from .turns import end_turn

Events = list[Event]


def leave(state: GameState, seat: int, now: int, events: Events) -> None:
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    if not 0 <= seat < state.seats:
        raise RuleError(Reason.NOT_SEATED, "You have no seat at this table.")
    if state.status[seat] != SeatStatus.PLAYING:
        raise RuleError(Reason.SEAT_LEFT, "You have already left this table.")
    state.status[seat] = SeatStatus.LEFT
    if seat in state.claimants:
        state.claimants.remove(seat)
    events.append(PlayerLeft(seat))
    still = state.playing()
    if len(still) == 1:
        end_game(state, still[0], EndReason.OTHERS_LEFT, events)
        return
    if state.phase in (Phase.DRAW, Phase.PLAY) and seat == state.current:
        close_claims(state, events)
        events.append(TurnPassed(seat, "left"))
        end_turn(state, now, events)


def abandon(state: GameState, seat: int, events: Events) -> None:
    if seat != SYSTEM:
        raise RuleError(Reason.NOT_YOUR_TURN, "Only the table ends an abandoned game.")
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    end_game(state, best_placed(state, state.playing()), EndReason.OTHERS_LEFT, events)
