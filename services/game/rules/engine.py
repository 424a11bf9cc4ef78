"""The referee: `apply(state, seat, action, now)` returns the next state and the
events the action caused, or raises `RuleError` and leaves ``state`` unchanged.

Each phase has its own small handler, in a module of its own: `dealing`,
`drawing`, `melding` (the play phase), `discarding`, `claims`, `timeout`,
`resuming`, `leaving` and `ending`, with the checks they share in `guards`.
Every handler validates before it writes, and works on a copy, so a refusal
can never leave a half-applied action behind.
Rule-set differences are read from `state.ruleset`, never from its name.
"""

from __future__ import annotations

from .actions import (
    Abandon,
    Action,
    Claim,
    Deal,
    Discard,
    DrawStock,
    EndTable,
    LayOff,
    Leave,
    Meld,
    Reposer,
    Resume,
    SwapJoker,
    TakeDiscard,
    Timeout,
)
from .claims import claim
from .dealing import deal
from .discarding import discard
from .drawing import draw_stock, reposer, take_discard
from .ending import end_table
from .errors import Reason, RuleError
from .events import Event
from .leaving import abandon, leave
from .melding import lay_off, meld, swap_joker
from .resuming import resume
from .state import GameState, Phase
from .timeout import no_move, timeout

Events = list[Event]


def apply(state: GameState, seat: int, action: Action, now: int) -> tuple[GameState, Events]:
    """Apply ``action`` by ``seat`` (``SYSTEM`` for deal and timeout) at ``now`` (ms)."""
    new = state.copy()
    events: Events = []
    match action:
        case DrawStock():
            draw_stock(new, seat, now, events)
        case TakeDiscard():
            take_discard(new, seat, events)
        case Meld():
            meld(new, seat, action, now, events)
        case LayOff():
            lay_off(new, seat, action, now, events)
        case SwapJoker():
            swap_joker(new, seat, action, now, events)
        case Discard():
            discard(new, seat, action, now, events)
        case Reposer():
            reposer(new, seat, events)
        case Claim():
            claim(new, seat, action, now, events)
        case Timeout():
            timeout(new, seat, now, events)
        case Resume():
            resume(new, seat, action, now, events)
        case Deal():
            deal(new, seat, action, now, events)
        case Leave():
            leave(new, seat, now, events)
        case Abandon():
            abandon(new, seat, events)
        case EndTable():
            end_table(new, seat, action, events)
        case _:
            raise RuleError(Reason.ACTION_UNKNOWN, "That is not an action of this game.")
    if new.phase == Phase.PLAY and seat == new.current and no_move(new):
        # Decision (no move): nothing to wait for; the clock's rule applies at once.
        new.deadline_ms = min(new.deadline_ms, now)
    return new, events
