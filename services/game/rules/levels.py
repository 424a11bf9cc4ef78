"""Bot levels: how well a bot seat plays, from a beginner's game to the best the
engine knows.

`strong` is the greedy bot as it is. `easy` and `normal` play its moves too,
but now and then make the mistakes people make while they learn: they leave a
useful discard for a card from the stock, miss a lay-off or a joker swap, keep
their melds in hand for another turn, hold on to high cards, and now and then
throw away a card of a meld they hold. Each mistake is a toss (`tosses`) read
from the table's state, so a game with such bots replays exactly.

A mistake never leaves the bot without a move, and never touches a card taken
from the discard pile that has to be used this turn: that card is used as the
greedy bot uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .actions import Action, Discard, DrawStock, LayOff, Meld, SwapJoker, TakeDiscard
from .bots import GreedyBot
from .finder import find_melds
from .legal import can_draw_stock, discardable
from .scoring import card_penalty
from .state import GameState, Phase
from .tosses import toss
from .turns import taken_card_owed


class BotLevel(StrEnum):
    EASY = "easy"
    NORMAL = "normal"
    STRONG = "strong"


@dataclass(frozen=True, slots=True)
class Mistakes:
    """How often a bot errs, each a chance from 0 (never) to 1 (every time)."""

    passes_discard: float = 0.0
    """Draws from the stock instead of taking a discard it could use."""
    misses_lay_off: float = 0.0
    """Overlooks a card it could lay off (and so discards at once)."""
    melds_late: float = 0.0
    """Keeps the melds it holds in hand for another turn (and discards at once)."""
    misses_swap: float = 0.0
    """Overlooks a joker it could take from the table."""
    keeps_high: float = 0.0
    """Discards its lowest spare card, holding on to a high one it cannot use."""
    breaks_meld: float = 0.0
    """Discards a card of a meld it holds."""
    misses_claim: float = 0.0
    """`contract`: lets a discard it wants go unclaimed ("Puis-je ?")."""


MISTAKES = {
    BotLevel.EASY: Mistakes(
        passes_discard=0.75,
        misses_lay_off=0.7,
        melds_late=0.6,
        misses_swap=1.0,
        keeps_high=0.6,
        breaks_meld=0.15,
        misses_claim=0.8,
    ),
    BotLevel.NORMAL: Mistakes(
        passes_discard=0.45,
        misses_lay_off=0.4,
        melds_late=0.35,
        misses_swap=0.5,
        keeps_high=0.35,
        breaks_meld=0.06,
        misses_claim=0.4,
    ),
    BotLevel.STRONG: Mistakes(),
}
"""The chances of each mistake per level. `strong` makes none: it is the greedy bot."""


class LevelBot:
    """The greedy bot's moves, with the mistakes of a level. Same interface as
    `GreedyBot`: one action for the seat whose turn it is, or None."""

    def __init__(self, level: BotLevel) -> None:
        self.level = level
        self.mistakes = MISTAKES[level]
        self._greedy = GreedyBot()

    def move(self, state: GameState, seat: int) -> Action | None:
        best = self._greedy.move(state, seat)
        if best is None or self.level is BotLevel.STRONG:
            return best
        if state.phase == Phase.DRAW:
            return self._draw(state, seat, best)
        return self._play(state, seat, best)

    def claims(self, state: GameState, seat: int) -> bool:
        """`GreedyBot.claims`, unless the bot misses the chance."""
        if not self._greedy.claims(state, seat):
            return False
        return not self._errs(state, seat, self.mistakes.misses_claim, "claim")

    def _errs(self, state: GameState, seat: int, chance: float, *what: int | str) -> bool:
        return chance > 0 and toss(state, seat, *what) < chance

    def _draw(self, state: GameState, seat: int, best: Action) -> Action:
        if (
            isinstance(best, TakeDiscard)
            and can_draw_stock(state)
            and self._errs(state, seat, self.mistakes.passes_discard, "take")
        ):
            return DrawStock()
        return best

    def _play(self, state: GameState, seat: int, best: Action) -> Action:
        if taken_card_owed(state):
            return best
        m = self.mistakes
        if isinstance(best, Discard):
            return self._discard(state, seat) or best
        missed = (
            (isinstance(best, Meld) and self._errs(state, seat, m.melds_late, "meld"))
            or (
                isinstance(best, LayOff)
                and self._errs(state, seat, m.misses_lay_off, "lay_off", *best.cards)
            )
            or (isinstance(best, SwapJoker) and self._errs(state, seat, m.misses_swap, "swap"))
        )
        if missed:
            return self._discard(state, seat) or best
        return best

    def _discard(self, state: GameState, seat: int) -> Discard | None:
        """The greedy bot's discard (its costliest card no meld uses), unless the
        bot breaks a meld it holds or keeps its high cards."""
        rules = state.ruleset
        hand = state.hands[seat]
        pool = discardable(state, hand)
        if not pool:
            return None
        left = set(find_melds(hand, rules, keep_one=rules.must_discard_to_go_out).left)
        in_melds = [c for c in pool if c not in left]
        if in_melds and self._errs(state, seat, self.mistakes.breaks_meld, "break"):
            pick = toss(state, seat, "break", "card")
            return Discard(sorted(in_melds)[int(pick * len(in_melds))])
        spare = [c for c in pool if c in left] or pool
        if self._errs(state, seat, self.mistakes.keeps_high, "keep_high"):
            return Discard(min(spare, key=lambda c: (card_penalty(c, rules), c)))
        return Discard(max(spare, key=lambda c: (card_penalty(c, rules), -c)))


def bot_for(level: BotLevel) -> LevelBot:
    """The bot that plays at ``level``."""
    return LevelBot(level)
