"""Bot seats, played by the server itself with the engine's bots, at the level
the table was made with (`rules.levels`).

A bot's next action is due a moment after the last (`pacing`: one action at a
time where a person plays, the whole turn at once at a table of bots alone),
and the timeout sweeper plays it: bots ride the same exactly-once claim as turn
timeouts, on whichever replica gets there first. In `contract`, a bot claims a
passed-over discard ("Puis-je ?") at once, in the commit that opened the window;
the window still runs its course, and a nearer claimant still wins it. Once
the last person at a table leaves or is eliminated, the game ends (`abandoned`):
bots do not play it out for nobody.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rules.actions import Action, Claim
from .rules.engine import apply
from .rules.errors import RuleError
from .rules.events import Event, PlayerEliminated, PlayerLeft
from .rules.levels import BotLevel, LevelBot
from .rules.state import GameState, Phase

BOT_DELAY_MS = 800
"""How long a bot seems to think before it plays a whole turn (`pacing`)."""
TURN_ACTIONS = 64
"""More actions than any turn takes: a bot still moving after these is stuck."""

_BOTS = {level: LevelBot(level) for level in BotLevel}


def bot_turn(
    state: GameState,
    seat: int,
    now_ms: int,
    *,
    level: BotLevel = BotLevel.STRONG,
    most: int = TURN_ACTIONS,
) -> tuple[GameState, list[Event]]:
    """Play ``seat``'s turn, or its next ``most`` actions (1: a paced bot); stops
    early (the clock then passes the turn) if stuck."""
    bot = _BOTS[level]
    events: list[Event] = []
    for _ in range(most):
        if state.phase not in (Phase.DRAW, Phase.PLAY) or state.current != seat:
            break
        action: Action | None = bot.move(state, seat)
        if action is None:
            break
        try:
            state, more = apply(state, seat, action, now_ms)
        except RuleError:
            # A bot must never wedge a table: leave the turn to the clock.
            break
        events.extend(more)
        if state.claim_card >= 0:
            # Let the other seats claim the discard it passed over ("Puis-je ?").
            break
    return state, events


def bot_claims(
    state: GameState, bots: Sequence[int], now_ms: int, level: BotLevel = BotLevel.STRONG
) -> tuple[GameState, list[Event]]:
    """Every bot seat that wants the discard open to claims claims it."""
    bot = _BOTS[level]
    events: list[Event] = []
    for seat in sorted(bots):
        if state.claim_card < 0:
            break
        if not bot.claims(state, seat):
            continue
        try:
            state, more = apply(state, seat, Claim(state.claim_card), now_ms)
        except RuleError:
            continue
        events.extend(more)
    return state, events


def abandoned(state: GameState, events: Sequence[Event], bots: Sequence[int]) -> bool:
    """Whether these events just took the last person out of a game that goes on
    with bots only. (A table made of bots alone, for people to watch, plays on.)"""
    if state.phase == Phase.GAME_OVER or not bots:
        return False
    if any(s not in bots for s in state.playing()):
        return False
    return any(isinstance(e, PlayerLeft | PlayerEliminated) and e.seat not in bots for e in events)
