"""What a table does by itself: the house deals every round (`House`), and the
bot seats are played by the server itself with the engine's bots, at the level
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

import random
import secrets
from collections.abc import Sequence

from .dealrng import DealRandom
from .rules.actions import SYSTEM, Abandon, Action, Claim, Deal
from .rules.engine import apply
from .rules.errors import RuleError
from .rules.events import ClaimWindowOpened, Event, PlayerEliminated, PlayerLeft
from .rules.levels import BotLevel, LevelBot
from .rules.state import GameState, Phase

SALT_BYTES = 16
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


class House:
    """The house at every table: it deals (from the OS's cryptographic source in
    production), and plays what no player does after a move."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or DealRandom()

    def deal(self, state: GameState, order: Sequence[int] | None = None) -> Deal:
        """The next round's deal: shuffled, or in ``order`` (a test deck)."""
        if order is None:
            cards = list(state.ruleset.deck.ids())
            self._rng.shuffle(cards)
            order = cards
        # The salt is always secret and cryptographic, even for a test deck: it is
        # what keeps the order from being guessed from the commitment.
        return Deal(tuple(order), self._rng.getrandbits(63), secrets.token_bytes(SALT_BYTES))

    def followed(
        self,
        state: GameState,
        events: list[Event],
        now_ms: int,
        *,
        bots: Sequence[int],
        level: BotLevel,
    ) -> tuple[GameState, list[Event]]:
        """The next round's deal when a move ended a round; the bot seats' claims
        when a move opened a claim window; the game's end when the move took the
        last person out and only bots play on. In the move's own commit."""
        if abandoned(state, events, bots):
            state, more = apply(state, SYSTEM, Abandon(), now_ms)
            return state, events + more
        if state.phase == Phase.DEAL:
            state, more = apply(state, SYSTEM, self.deal(state), now_ms)
            events = events + more
        if bots and any(isinstance(e, ClaimWindowOpened) for e in events):
            state, more = bot_claims(state, bots, now_ms, level)
            events = events + more
        return state, events
