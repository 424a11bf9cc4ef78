"""The play phase: laying melds from the hand (``meld``, the opening among them),
laying cards off on the table's melds (``lay_off``), and taking a joker back
from a meld (``swap_joker``)."""

from __future__ import annotations

from collections.abc import Sequence

from . import melds as M
from .actions import LayOff, Meld, MeldSpec, SwapJoker
from .claims import close_claims
from .errors import Reason, RuleError
from .events import EndReason, Event, JokerSwapped, LaidOff, Melded
from .guards import require_may_swap, require_opened, require_turn, take_from_hand
from .opening import check_laying, keep_one, opening_points
from .rounds import end_round
from .state import GameState, Phase
from .turns import announce, taken_card_owed

Events = list[Event]


def _keep_one(state: GameState, left: Sequence[int]) -> None:
    keep_one(state, len(left))


def _after_play(state: GameState, seat: int, used: Sequence[int], now: int, events: Events) -> None:
    """Book-keeping after a meld, lay-off or swap: the taken card, "Carte !", going out."""
    state.moved = True
    if state.taken_discard in used:
        state.taken_used = True
    announce(state, seat, events)
    if not state.hands[seat]:
        close_claims(state, events)
        end_round(state, seat, EndReason.WENT_OUT, events)


def _shape(spec: MeldSpec, state: GameState) -> M.Shape:
    return M.check_meld(spec.cards, state.ruleset, spec.joker_suits, spec.kind)


def meld(state: GameState, seat: int, action: Meld, now: int, events: Events) -> None:
    require_turn(state, seat, Phase.PLAY)
    if not action.melds:
        raise RuleError(Reason.NOTHING_TO_MELD, "Name the cards of at least one meld.")
    cards = [c for spec in action.melds for c in spec.cards]
    left = take_from_hand(state.hands[seat], cards, state)
    shapes = [_shape(spec, state) for spec in action.melds]
    check_laying(state, seat, shapes, cards, len(left))
    opening = not state.opened[seat]
    points = opening_points(state, seat, shapes)
    placed = tuple(_place(state, seat, shape) for shape in shapes)
    state.hands[seat] = left
    state.opened[seat] = True
    events.append(Melded(seat, placed, opening, points))
    _after_play(state, seat, cards, now, events)


def _place(state: GameState, seat: int, shape: M.Shape) -> M.TableMeld:
    meld = shape.place(state.next_meld_id, seat)
    state.next_meld_id += 1
    state.melds.append(meld)
    return meld


def _table_meld(state: GameState, meld_id: int) -> int:
    index = state.meld(meld_id)
    if index < 0:
        raise RuleError(Reason.MELD_NOT_FOUND, f"There is no meld {meld_id} on the table.")
    return index


def lay_off(state: GameState, seat: int, action: LayOff, now: int, events: Events) -> None:
    require_turn(state, seat, Phase.PLAY)
    require_opened(state, seat, "lay off")
    index = _table_meld(state, action.meld_id)
    left = take_from_hand(state.hands[seat], action.cards, state)
    meld = M.extend_meld(state.melds[index], action.cards, action.side, state.ruleset)
    _keep_one(state, left)
    state.melds[index] = meld
    state.hands[seat] = left
    events.append(LaidOff(seat, action.cards, meld))
    _after_play(state, seat, action.cards, now, events)


def _swapped(state: GameState, action: SwapJoker) -> M.TableMeld:
    """The meld after the swap."""
    rules = state.ruleset
    meld = state.melds[_table_meld(state, action.meld_id)]
    if rules.group_swap_completes and meld.kind == M.MeldKind.GROUP and len(meld.cards) == 3:
        if action.second < 0:
            raise RuleError(
                Reason.SWAP_INVALID,
                "Take a joker from a brelan by adding both missing cards of the carré.",
            )
        return M.complete_group(meld, action.joker, (action.replacement, action.second), rules)
    if action.second >= 0:
        raise RuleError(Reason.SWAP_INVALID, "One card takes a joker's place here.")
    return M.replace_joker(meld, action.joker, action.replacement, rules)


def _check_unopened_swap(state: GameState, seat: int, action: SwapJoker) -> None:
    """`classic` lets a seat that has not opened take a joker (seed 002: « tout
    joueur peut à son tour s'emparer »), but nothing else of the swap may lay a
    card before the opening: the joker stays in hand (it may go into the opening
    next), and a card taken from the discard pile still goes into the opening."""
    if state.opened[seat]:
        return
    if action.new_meld is not None or action.lay_off is not None:
        raise RuleError(
            Reason.NOT_OPENED,
            "Before your opening the joker you take back stays in your hand:"
            " lay it down in your opening.",
        )
    if taken_card_owed(state) and state.taken_discard in (action.replacement, action.second):
        raise RuleError(
            Reason.TAKEN_CARD_UNUSED,
            "Your opening must use the card you took from the discard pile.",
        )


def swap_joker(state: GameState, seat: int, action: SwapJoker, now: int, events: Events) -> None:
    require_turn(state, seat, Phase.PLAY)
    require_may_swap(state, seat)
    rules = state.ruleset
    index = _table_meld(state, action.meld_id)
    put_in = [action.replacement] + ([action.second] if action.second >= 0 else [])
    _check_unopened_swap(state, seat, action)
    left = take_from_hand(state.hands[seat], put_in, state)
    swapped = _swapped(state, action)
    if action.new_meld is not None and action.lay_off is not None:
        raise RuleError(Reason.SWAP_INVALID, "Put the joker in one place only.")
    placement = action.new_meld.cards if action.new_meld else ()
    if action.lay_off is not None:
        placement = action.lay_off.cards
    if len(set(placement)) != len(placement):
        raise RuleError(Reason.CARD_DUPLICATED, "The same card is named twice.")
    if placement and action.joker not in placement:
        raise RuleError(Reason.SWAP_JOKER_NOT_PLACED, "Place the joker you took back.")
    if not placement and rules.retrieved_joker_must_be_melded:
        raise RuleError(
            Reason.SWAP_JOKER_NOT_PLACED,
            "The joker you take back must go into a meld in the same move.",
        )
    left = take_from_hand(left, [c for c in placement if c != action.joker], state)
    if placement:
        _keep_one(state, left)
    state.melds[index] = swapped
    after: Event | None = None
    placed_in: M.TableMeld | None = None
    if action.new_meld is not None:
        placed_in = _place(state, seat, _shape(action.new_meld, state))
        after = Melded(seat, (placed_in,))
    elif action.lay_off is not None:
        target = _table_meld(state, action.lay_off.meld_id)
        placed_in = M.extend_meld(state.melds[target], placement, action.lay_off.side, rules)
        state.melds[target] = placed_in
        after = LaidOff(seat, placement, placed_in)
    else:
        left.append(action.joker)
    state.hands[seat] = left
    events.append(
        JokerSwapped(seat, action.joker, action.replacement, swapped, action.second, placed_in)
    )
    if after is not None:
        events.append(after)
    used = [action.replacement, action.second, *placement]
    _after_play(state, seat, used, now, events)
