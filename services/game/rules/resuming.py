"""The table clock's ``Resume``: the service is back after nobody could reach it.

While the database (or every replica) is out, no move can be made, but the
clock that turns run on keeps going: without a resume, every turn whose time
ran out meanwhile would time out the moment the service came back. A turn in
play when the clock stopped gets back the time it had left then, counted from
when it started again, and at least `RESUME_LEAST_MS` from now (a player told
the service is back needs a moment); an open claim window opens again for its
whole length. Each stop gives a turn its time back once (`state.resumed_ms`).
"""

from __future__ import annotations

from .actions import SYSTEM, Resume
from .errors import Reason, RuleError
from .events import Event, TurnResumed
from .state import GameState, Phase
from .timeout import no_move

Events = list[Event]

RESUME_LEAST_MS = 10_000
"""The least time a resumed turn has from the resume on (or the whole turn timer,
if shorter): enough to see that the game goes on and to act."""


def resume(state: GameState, seat: int, action: Resume, now: int, events: Events) -> None:
    if seat != SYSTEM:
        raise RuleError(Reason.NOT_YOUR_TURN, "Only the table clock gives a turn more time.")
    if state.phase not in (Phase.DRAW, Phase.PLAY):
        raise RuleError(Reason.NO_ROUND_IN_PLAY, "No turn is in play.")
    stopped, restarted = action.stopped_ms, action.restarted_ms
    options = state.options
    claim_open = state.claim_card >= 0
    began = state.deadline_ms - options.turn_timer_ms
    # In play when the clock stopped: begun before it started again (a turn
    # begun in between, before the stop was recorded, gets at most its own
    # timer back) and not yet due when it stopped.
    in_play = began < restarted and state.deadline_ms > stopped
    if restarted <= max(stopped, state.resumed_ms) or not in_play:
        raise RuleError(Reason.CLOCK_NOT_STOPPED, "The turn's clock did not stop.")
    if state.phase == Phase.PLAY and no_move(state):
        raise RuleError(Reason.CLOCK_NOT_STOPPED, "The turn has nothing to wait for.")
    least = now + min(RESUME_LEAST_MS, options.turn_timer_ms)
    left = state.deadline_ms - max(stopped, began)
    state.deadline_ms = max(state.deadline_ms, restarted + left, least)
    if claim_open:
        state.claim_deadline_ms = max(state.claim_deadline_ms, now + options.claim_window_ms)
    state.resumed_ms = restarted
    events.append(
        TurnResumed(
            state.current,
            state.turn,
            state.deadline_ms,
            state.claim_deadline_ms if claim_open else 0,
            restarted - stopped,
        )
    )
