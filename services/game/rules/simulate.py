"""Play whole games inside the engine: for tests, benchmarks and the demo."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol

from .actions import SYSTEM, Action, Deal, Timeout
from .engine import apply
from .events import Event
from .ruleset import Ruleset, TableOptions
from .state import GameState, Phase, new_game


class Player(Protocol):
    def move(self, state: GameState, seat: int) -> Action | None: ...


Observer = Callable[[GameState, int, Action, GameState, list[Event]], None]


def deal_action(state: GameState, rng: random.Random) -> Deal:
    order = list(state.ruleset.deck.ids())
    rng.shuffle(order)
    return Deal(tuple(order), rng.getrandbits(32))


def play_game(
    ruleset: Ruleset,
    players: Sequence[Player],
    rng: random.Random,
    *,
    options: TableOptions | None = None,
    observe: Observer | None = None,
    max_steps: int = 100_000,
) -> GameState:
    """Play one game to its end; the clock only moves when a seat has no legal move."""
    state = new_game(ruleset, len(players), options)
    now = 0
    for _ in range(max_steps):
        if state.phase == Phase.GAME_OVER:
            return state
        seat: int
        action: Action | None
        if state.phase == Phase.DEAL:
            seat, action = SYSTEM, deal_action(state, rng)
        else:
            seat = state.current
            action = players[seat].move(state, seat)
            if action is None:
                seat, action, now = SYSTEM, Timeout(), state.deadline_ms
        new, events = apply(state, seat, action, now)
        if observe is not None:
            observe(state, seat, action, new, events)
        state = new
    raise RuntimeError("game did not end")
