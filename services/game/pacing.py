"""How fast the server's bots play (`BotPace`).

At a table where a person plays, a bot plays its turn one action at a time, as
a person would: it thinks 1.5 to 3 s before it draws, and 1 to 2 s before each
meld, lay-off, swap or discard, so the person can follow what it does. Each
think time is a toss read from the table's state (`rules.tosses`), so it is
the same on every replica and in a replay. The sweeper plays each action when
it falls due, under the same exactly-once claim as a timeout: a paced turn is
several due times, one commit each.

A table of bots alone (one for people to watch) has nobody to wait for: its
bots play each whole turn at once, a moment (`delay_ms`) after it begins, as
every bot does when the pace's scale is 0.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from .rules.state import GameState, Phase
from .rules.tosses import toss

DRAW_THINK_MS = (1500, 3000)
"""Before the draw: the bot looks at the discard and its hand."""
PLAY_THINK_MS = (1000, 2000)
"""Before each later action of the turn (a meld, a lay-off, a swap, the discard)."""
BOT_DELAY_MS = 800
"""Where bots play whole turns: how long a bot seems to think before it plays."""
SHARE_OF_TIME_LEFT = 4
"""A think takes at most this share of the turn's time left. A 45 s turn never
meets it; a short table timer hurries the bot instead of passing its turn (after
five actions, a quarter of the timer is still left)."""


def think_ms(state: GameState) -> int:
    """How long the current seat thinks before its next action, at scale 1."""
    low, high = DRAW_THINK_MS if state.phase == Phase.DRAW else PLAY_THINK_MS
    seat = state.current
    # What changes with each action of a turn, so each gets a toss of its own.
    point = (int(state.phase), len(state.hands[seat]), state.next_meld_id, len(state.discard))
    return low + int(toss(state, seat, "think", *point) * (high - low))


@dataclass(frozen=True, slots=True)
class BotPace:
    scale: float = 1.0
    """Think times are multiplied by this; 0: every bot plays each turn whole."""
    delay_ms: int = BOT_DELAY_MS
    """Where turns are played whole: how long after the turn began."""

    def paced(self, state: GameState, bots: Collection[int]) -> bool:
        """Whether the bots of this table play one action at a time: a person
        still plays at it, and the scale is not 0."""
        return self.scale > 0 and any(s not in bots for s in state.playing())

    def due_ms(self, state: GameState, bots: Collection[int], now_ms: int) -> int:
        """When the bot holding the turn plays next. A paced bot never thinks for
        more than a quarter of the time its turn has left, so a short turn timer
        hurries it rather than passing its turn."""
        if not self.paced(state, bots):
            return now_ms + self.delay_ms
        think = round(think_ms(state) * self.scale)
        return now_ms + min(think, max(0, state.deadline_ms - now_ms) // SHARE_OF_TIME_LEFT)
