"""What melds laid from the hand in one action must meet beyond the turn and the
cards themselves: a card kept for the discard, the opening (the table's
threshold, or the deal's contract) and the card taken from the discard pile.

The engine refuses a `Meld` by `check_laying`; a hint asks `laying_refusal` of
the melds it proposes, so the two always agree."""

from __future__ import annotations

from collections.abc import Sequence

from .contract import check_contract
from .errors import Reason, RuleError
from .melds import Shape
from .ruleset import TakenDiscard
from .scoring import meld_points
from .state import GameState
from .turns import taken_card_owed


def keep_one(state: GameState, left: int) -> None:
    """Refuse a play that would leave no card when a discard closes every turn."""
    if state.ruleset.must_discard_to_go_out and not left:
        raise RuleError(
            Reason.MUST_KEEP_CARD,
            "Keep one card: a discard closes every turn, the last one too.",
        )


def opening_points(state: GameState, seat: int, shapes: Sequence[Shape]) -> int:
    """What ``shapes``, laid by ``seat`` in one action, count towards the table's
    points threshold: 0 when the seat has opened already, and when the opening
    is judged by no threshold (`cafe`) or by the deal's contract (`contract`)."""
    if state.opened[seat] or state.options.opening_threshold <= 0 or state.contract():
        return 0
    return sum(meld_points(s, state.ruleset) for s in shapes)


def check_opening(state: GameState, seat: int, shapes: Sequence[Shape], left: int) -> None:
    """Refuse a first laying that misses the table's threshold or the deal's contract."""
    rules = state.ruleset
    if state.opened[seat]:
        return
    contract = state.contract()
    if contract is not None:
        check_contract(shapes, contract, left)
        return
    threshold = state.options.opening_threshold
    if threshold <= 0 or left <= rules.opening_exempt_left:
        return
    points = opening_points(state, seat, shapes)
    if points < threshold:
        raise RuleError(
            Reason.OPENING_TOO_LOW,
            f"Your opening counts {points} points; it needs at least {threshold}.",
        )


def check_laying(
    state: GameState, seat: int, shapes: Sequence[Shape], cards: Sequence[int], left: int
) -> None:
    """Refuse ``shapes`` (made of ``cards``, leaving ``left`` cards in hand) laid by ``seat``."""
    contract = state.contract()
    if not (contract and contract.no_final_discard and not state.opened[seat]):
        keep_one(state, left)
    check_opening(state, seat, shapes, left)
    # Taken before opening (rami51, classic): the card goes into the opening itself.
    if (
        seat == state.current
        and not state.opened[seat]
        and state.ruleset.taken_discard in (TakenDiscard.USE_IN_OPENING, TakenDiscard.USE_THIS_TURN)
        and taken_card_owed(state)
        and state.taken_discard not in cards
    ):
        raise RuleError(
            Reason.TAKEN_CARD_UNUSED,
            "Your opening must use the card you took from the discard pile.",
        )


def laying_refusal(
    state: GameState, seat: int, shapes: Sequence[Shape], *, to_draw: int = 0
) -> RuleError | None:
    """Why ``seat`` could not lay ``shapes`` (from its hand) in one action, as far
    as keeping a card, the opening and the taken card go (whose turn it is aside);
    None when it could. ``to_draw``: cards the seat will draw first, which stay
    in its hand (they count against a hand laid almost whole)."""
    cards = [c for shape in shapes for c in shape.cards]
    left = len(state.hands[seat]) - len(cards) + to_draw
    try:
        check_laying(state, seat, shapes, cards, left)
    except RuleError as error:
        return error
    return None
