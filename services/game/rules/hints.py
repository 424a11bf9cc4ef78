"""What a hint proposes: the melds the engine would let a seat lay now (its
opening threshold, the deal's contract, a card taken from the discard pile),
or else the finder's best melds, with the engine's reason for refusing them."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import RuleError
from .finder import candidates, find_melds
from .melds import Shape
from .opening import laying_refusal
from .plans import melds_to_lay
from .scoring import meld_points
from .state import GameState, Phase
from .turns import taken_card_owed


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
    keep = rules.must_discard_to_go_out
    found = find_melds(hand, rules, keep_one=keep)
    melds = melds_to_lay(state, seat, hand, found) or list(found.melds)
    # Before its draw a seat lays nothing: its melds are judged as they would be
    # after it, with the drawn card still in hand.
    to_draw = 0 if state.current == seat and state.phase == Phase.PLAY else 1
    refusal = laying_refusal(state, seat, melds, to_draw=to_draw) if melds else None
    # A discard taken this turn that the opening must use: the lightest hand's melds
    # may leave it out, or count too little, while another set opens with it.
    owed = state.current == seat and taken_card_owed(state) and not state.opened[seat]
    if refusal is not None and owed:
        melds, refusal = _with_taken_card(state, seat, keep) or (melds, refusal)
    return Hint(melds, refusal)


def _with_taken_card(state: GameState, seat: int, keep: bool) -> tuple[list[Shape], None] | None:
    """The richest opening that uses the card taken from the discard pile: each
    meld that holds it, with the best melds of the rest of the hand (the lightest
    hand's melds may leave the card out while another set opens with it)."""
    rules = state.ruleset
    hand = state.hands[seat]
    best: list[Shape] | None = None
    best_points = -1
    for shape in candidates(hand, rules):
        if state.taken_discard not in shape.cards:
            continue
        rest = [c for c in hand if c not in shape.cards]
        melds = [shape, *find_melds(rest, rules, keep_one=keep).melds]
        points = sum(meld_points(m, rules) for m in melds)
        if points > best_points and laying_refusal(state, seat, melds) is None:
            best, best_points = melds, points
    return (best, None) if best is not None else None
