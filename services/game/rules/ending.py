"""A table ended from outside the game: the people who run the service stop a
game that cannot go on. Nobody wins; the players are told why in their words."""

from __future__ import annotations

from .actions import SYSTEM, EndTable
from .errors import Reason, RuleError
from .events import EndReason, Event
from .rounds import end_game
from .state import GameState, Phase

Events = list[Event]


def end_table(state: GameState, seat: int, action: EndTable, events: Events) -> None:
    if seat != SYSTEM:
        raise RuleError(Reason.NOT_YOUR_TURN, "Only the table is ended from outside the game.")
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    end_game(state, -1, EndReason.ENDED_BY_OPERATOR, events, action.note)
