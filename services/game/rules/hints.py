"""What a hint proposes: the melds the engine would let a seat lay now (its
opening threshold, the deal's contract, a card taken from the discard pile),
or else the finder's best melds, with the engine's reason for refusing them."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import RuleError
from .finder import find_melds
from .melds import Shape
from .opening import laying_refusal
from .plans import melds_to_lay
from .state import GameState, Phase


@dataclass(frozen=True, slots=True)
class Hint:
    melds: list[Shape]
    refusal: RuleError | None
    """Why the engine would refuse ``melds`` now; None when it would lay them."""

    @property
    def opens(self) -> bool:
        return bool(self.melds) and self.refusal is None


def hint(state: GameState, seat: int) -> Hint:
    rules = state.ruleset
    hand = state.hands[seat]
    found = find_melds(hand, rules, keep_one=rules.must_discard_to_go_out)
    # Before its draw a seat lays nothing: its melds are judged as they would be
    # after it, with the drawn card still in hand.
    to_draw = 0 if state.current == seat and state.phase == Phase.PLAY else 1
    # `melds_to_lay` opens where any melds of the hand open (with a discard taken
    # this turn, when one is owed); else the finder's melds show what is missing.
    melds = melds_to_lay(state, seat, hand, found, to_draw=to_draw) or list(found.melds)
    refusal = laying_refusal(state, seat, melds, to_draw=to_draw) if melds else None
    return Hint(melds, refusal)
