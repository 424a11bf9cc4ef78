"""What a player's move checks before it changes anything: that the seat still
plays at this table, that it holds the turn in the right phase, that it has
opened where that counts, and that the cards it names are in its hand."""

from __future__ import annotations

from collections.abc import Sequence

from .errors import Reason, RuleError
from .state import GameState, Phase, SeatStatus


def require_seat(state: GameState, seat: int) -> None:
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    if state.phase == Phase.DEAL:
        raise RuleError(Reason.NO_ROUND_IN_PLAY, "No round is in play yet.")
    if not 0 <= seat < state.seats:
        raise RuleError(Reason.NOT_SEATED, "You have no seat at this table.")
    if state.status[seat] != SeatStatus.PLAYING:
        raise RuleError(Reason.SEAT_LEFT, "You are no longer playing at this table.")


def require_turn(state: GameState, seat: int, phase: Phase) -> None:
    require_seat(state, seat)
    if seat != state.current:
        raise RuleError(Reason.NOT_YOUR_TURN, "It is not your turn.")
    if state.phase != phase:
        if phase == Phase.DRAW:
            raise RuleError(Reason.ALREADY_DREW, "You have already drawn this turn.")
        raise RuleError(Reason.MUST_DRAW_FIRST, "Draw a card first, from the stock or the discard.")


def require_opened(state: GameState, seat: int, doing: str) -> None:
    """Lay-offs come once the seat has opened (every rule set), and joker swaps
    where the rule set says so (`require_may_swap`)."""
    if not state.opened[seat]:
        first = "your contract" if state.ruleset.contracts else "a meld of your own"
        raise RuleError(Reason.NOT_OPENED, f"Lay down {first} before you {doing}.")


def require_may_swap(state: GameState, seat: int) -> None:
    """A joker swap needs an opening where the rule set says so (not `classic`)."""
    if state.ruleset.swap_needs_opening:
        require_opened(state, seat, "swap a joker")


def swap_refusal(state: GameState, seat: int) -> RuleError | None:
    """Why ``seat`` may not swap any joker now, in the order a swap is checked: not
    its turn, nothing drawn yet, not opened (where that counts). None when a swap
    may be tried."""
    try:
        require_turn(state, seat, Phase.PLAY)
        require_may_swap(state, seat)
    except RuleError as error:
        return error
    return None


def take_from_hand(hand: list[int], cards: Sequence[int], state: GameState) -> list[int]:
    """The hand without ``cards``; refuses unknown, missing or repeated cards."""
    deck = state.ruleset.deck
    if len(set(cards)) != len(cards):
        raise RuleError(Reason.CARD_DUPLICATED, "The same card is named twice.")
    left = list(hand)
    for card in cards:
        if not deck.is_card(card):
            raise RuleError(Reason.CARD_UNKNOWN, f"There is no card {card} in this game.")
        if card not in left:
            raise RuleError(Reason.CARD_NOT_IN_HAND, f"{deck.code(card)} is not in your hand.")
        left.remove(card)
    return left
