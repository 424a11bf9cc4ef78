"""Bot seats, played by the server itself with the engine's greedy bot.

A bot's turn is due a moment after it begins (so people can follow it), and
the timeout sweeper plays it: bots ride the same exactly-once claim as turn
timeouts, on whichever replica gets there first. In `contract`, a bot claims a
passed-over discard ("Puis-je ?") at once, in the commit that opened the window;
the window still runs its course, and a nearer claimant still wins it. Once
the last person at a table leaves or is eliminated, the game ends (`abandoned`):
bots do not play it out for nobody.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rules.actions import Action, Claim
from .rules.bots import GreedyBot
from .rules.engine import apply
from .rules.errors import RuleError
from .rules.events import Event, PlayerEliminated, PlayerLeft
from .rules.state import GameState, Phase

BOT_DELAY_MS = 800
"""How long a bot seems to think before it plays its turn."""

_BOT = GreedyBot()


def bot_turn(state: GameState, seat: int, now_ms: int) -> tuple[GameState, list[Event]]:
    """Play ``seat``'s whole turn; stops early (the clock then passes it) if stuck."""
    events: list[Event] = []
    for _ in range(64):
        if state.phase not in (Phase.DRAW, Phase.PLAY) or state.current != seat:
            break
        action: Action | None = _BOT.move(state, seat)
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


def bot_claims(state: GameState, bots: Sequence[int], now_ms: int) -> tuple[GameState, list[Event]]:
    """Every bot seat that wants the discard open to claims claims it."""
    events: list[Event] = []
    for seat in sorted(bots):
        if state.claim_card < 0:
            break
        if not _BOT.claims(state, seat):
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
