"""The referee: `apply(state, seat, action, now)` returns the next state and the
events the action caused, or raises `RuleError` and leaves ``state`` unchanged.

Each phase has its own small handler; every handler validates before it writes,
and works on a copy, so a refusal can never leave a half-applied action behind.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from . import melds as M
from .actions import (
    SYSTEM,
    Action,
    Deal,
    Discard,
    DrawStock,
    LayOff,
    Leave,
    Meld,
    MeldSpec,
    SwapJoker,
    TakeDiscard,
    Timeout,
)
from .errors import Reason, RuleError
from .events import (
    Discarded,
    Drew,
    EndReason,
    Event,
    GameEnded,
    JokerSwapped,
    LaidOff,
    Melded,
    PlayerEliminated,
    PlayerLeft,
    Reshuffled,
    RoundDealt,
    RoundEnded,
    TurnBegan,
    TurnPassed,
)
from .ruleset import JokerDiscard
from .scoring import card_penalty, hand_penalty, meld_points
from .state import GameState, Phase, RoundResult, SeatStatus

Events = list[Event]


def apply(state: GameState, seat: int, action: Action, now: int) -> tuple[GameState, Events]:
    """Apply ``action`` by ``seat`` (``SYSTEM`` for deal and timeout) at ``now`` (ms)."""
    new = state.copy()
    events: Events = []
    match action:
        case DrawStock():
            _draw_stock(new, seat, now, events)
        case TakeDiscard():
            _take_discard(new, seat, now, events)
        case Meld():
            _meld(new, seat, action, events)
        case LayOff():
            _lay_off(new, seat, action, events)
        case SwapJoker():
            _swap_joker(new, seat, action, events)
        case Discard():
            _discard(new, seat, action, now, events)
        case Timeout():
            _timeout(new, seat, now, events)
        case Deal():
            _deal(new, seat, action, now, events)
        case Leave():
            _leave(new, seat, now, events)
        case _:
            raise RuleError(Reason.ACTION_UNKNOWN, "That is not an action of this game.")
    return new, events


# --- guards -----------------------------------------------------------------


def _require_turn(state: GameState, seat: int, phase: Phase) -> None:
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    if state.phase == Phase.DEAL:
        raise RuleError(Reason.NO_ROUND_IN_PLAY, "No round is in play yet.")
    if not 0 <= seat < state.seats:
        raise RuleError(Reason.NOT_SEATED, "You have no seat at this table.")
    if state.status[seat] != SeatStatus.PLAYING:
        raise RuleError(Reason.SEAT_LEFT, "You are no longer playing at this table.")
    if seat != state.current:
        raise RuleError(Reason.NOT_YOUR_TURN, "It is not your turn.")
    if state.phase != phase:
        if phase == Phase.DRAW:
            raise RuleError(Reason.ALREADY_DREW, "You have already drawn this turn.")
        raise RuleError(Reason.MUST_DRAW_FIRST, "Draw a card first, from the stock or the discard.")


def _take_from_hand(hand: list[int], cards: Sequence[int], state: GameState) -> list[int]:
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


def _keep_one(state: GameState, left: Sequence[int]) -> None:
    if state.ruleset.must_discard_to_go_out and not left:
        raise RuleError(
            Reason.MUST_KEEP_CARD,
            "Keep one card: a discard closes every turn, the last one too.",
        )


# --- the deal ---------------------------------------------------------------


def _deal(state: GameState, seat: int, action: Deal, now: int, events: Events) -> None:
    if seat != SYSTEM:
        raise RuleError(Reason.NOT_YOUR_TURN, "Only the table deals.")
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    if state.phase != Phase.DEAL:
        raise RuleError(Reason.ROUND_IN_PLAY, "A round is already in play.")
    rules = state.ruleset
    if sorted(action.order) != list(rules.deck.ids()):
        raise RuleError(Reason.DECK_INVALID, "The deck order must hold every card exactly once.")
    players = _seats_from(state, state.dealer + 1)
    state.stock = list(reversed(action.order))
    state.hands = [[] for _ in range(state.seats)]
    for _ in range(rules.hand_size):
        for s in players:
            state.hands[s].append(state.stock.pop())
    state.discard = [state.stock.pop()]
    state.melds = []
    state.opened = [False] * state.seats
    state.next_meld_id = 1
    state.reshuffles = 0
    state.seed = action.seed
    state.round_no += 1
    state.turn = 0
    events.append(
        RoundDealt(
            state.round_no,
            state.dealer,
            tuple(tuple(h) for h in state.hands),
            state.discard[-1],
            len(state.stock),
        )
    )
    _begin_turn(state, players[0], now, events)


def _seats_from(state: GameState, start: int) -> list[int]:
    order = [(start + i) % state.seats for i in range(state.seats)]
    return [s for s in order if state.status[s] == SeatStatus.PLAYING]


# --- drawing ----------------------------------------------------------------


def _draw_stock(state: GameState, seat: int, now: int, events: Events) -> None:
    _require_turn(state, seat, Phase.DRAW)
    if not state.stock:
        _reshuffle(state, events)
    card = state.stock.pop()
    state.drawn = card
    state.hands[seat].append(card)
    state.phase = Phase.PLAY
    events.append(Drew(seat, card, False, len(state.stock)))


def _reshuffle(state: GameState, events: Events) -> None:
    limit = state.ruleset.max_reshuffles
    if len(state.discard) < 2 or (limit is not None and state.reshuffles >= limit):
        raise RuleError(Reason.STOCK_EMPTY, "The stock is empty: take the discard.")
    top = state.discard[-1]
    stock = state.discard[:-1]
    random.Random(state.seed * 1009 + state.reshuffles).shuffle(stock)
    state.stock = stock
    state.discard = [top]
    state.reshuffles += 1
    events.append(Reshuffled(len(stock), top))


def _take_discard(state: GameState, seat: int, now: int, events: Events) -> None:
    _require_turn(state, seat, Phase.DRAW)
    if not state.discard:
        raise RuleError(Reason.DISCARD_EMPTY, "The discard pile is empty: draw from the stock.")
    card = state.discard.pop()
    state.taken_discard = state.drawn = card
    state.hands[seat].append(card)
    state.phase = Phase.PLAY
    events.append(Drew(seat, card, True, len(state.stock)))


# --- melding ----------------------------------------------------------------


def _shape(spec: MeldSpec, state: GameState) -> M.Shape:
    return M.check_meld(spec.cards, state.ruleset, spec.joker_suits)


def _check_opening(state: GameState, seat: int, shapes: Sequence[M.Shape], left: int) -> None:
    threshold = state.ruleset.opening_threshold
    if state.opened[seat] or threshold <= 0 or left <= 1:
        return
    points = sum(meld_points(s, state.ruleset) for s in shapes)
    if points < threshold:
        raise RuleError(
            Reason.MELD_INVALID,
            f"Your opening counts {points} points; it needs at least {threshold}.",
        )


def _meld(state: GameState, seat: int, action: Meld, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    if not action.melds:
        raise RuleError(Reason.NOTHING_TO_MELD, "Name the cards of at least one meld.")
    cards = [c for spec in action.melds for c in spec.cards]
    left = _take_from_hand(state.hands[seat], cards, state)
    shapes = [_shape(spec, state) for spec in action.melds]
    _keep_one(state, left)
    _check_opening(state, seat, shapes, len(left))
    placed = tuple(_place(state, seat, shape) for shape in shapes)
    state.hands[seat] = left
    state.opened[seat] = True
    events.append(Melded(seat, placed))


def _place(state: GameState, seat: int, shape: M.Shape) -> M.Meld:
    meld = shape.place(state.next_meld_id, seat)
    state.next_meld_id += 1
    state.melds.append(meld)
    return meld


def _require_opened(state: GameState, seat: int, doing: str) -> None:
    if not state.opened[seat]:
        raise RuleError(Reason.NOT_OPENED, f"Lay down a meld of your own before you {doing}.")


def _table_meld(state: GameState, meld_id: int) -> int:
    index = state.meld(meld_id)
    if index < 0:
        raise RuleError(Reason.MELD_NOT_FOUND, f"There is no meld {meld_id} on the table.")
    return index


def _lay_off(state: GameState, seat: int, action: LayOff, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    _require_opened(state, seat, "lay off")
    index = _table_meld(state, action.meld_id)
    left = _take_from_hand(state.hands[seat], action.cards, state)
    meld = M.lay_off(state.melds[index], action.cards, action.side, state.ruleset)
    _keep_one(state, left)
    state.melds[index] = meld
    state.hands[seat] = left
    events.append(LaidOff(seat, action.cards, meld))


def _swap_joker(state: GameState, seat: int, action: SwapJoker, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    _require_opened(state, seat, "swap a joker")
    rules = state.ruleset
    index = _table_meld(state, action.meld_id)
    left = _take_from_hand(state.hands[seat], [action.replacement], state)
    swapped = M.swap_joker(state.melds[index], action.joker, action.replacement, rules)
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
    left = _take_from_hand(left, [c for c in placement if c != action.joker], state)
    _keep_one(state, left)
    state.melds[index] = swapped
    after: Event
    if action.new_meld is not None:
        meld = _place(state, seat, _shape(action.new_meld, state))
        after = Melded(seat, (meld,))
    elif action.lay_off is not None:
        target = _table_meld(state, action.lay_off.meld_id)
        laid = M.lay_off(state.melds[target], placement, action.lay_off.side, rules)
        state.melds[target] = laid
        after = LaidOff(seat, placement, laid)
    else:
        left.append(action.joker)
    state.hands[seat] = left
    events.append(JokerSwapped(seat, action.joker, action.replacement, swapped))
    if placement:
        events.append(after)


# --- discarding and the end of a turn ---------------------------------------


def _discard(state: GameState, seat: int, action: Discard, now: int, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    hand = state.hands[seat]
    left = _take_from_hand(hand, [action.card], state)
    rules = state.ruleset
    if action.card == state.taken_discard:
        raise RuleError(
            Reason.DISCARD_TAKEN_CARD,
            "You cannot throw back the card you just took from the discard pile.",
        )
    last_only = rules.joker_discard is JokerDiscard.LAST_CARD_ONLY
    if rules.deck.is_joker(action.card) and left and last_only:
        raise RuleError(
            Reason.JOKER_DISCARD_FORBIDDEN,
            "A joker can only be discarded as your last card, to go out.",
        )
    _throw(state, seat, action.card, left, False, now, events)


def _throw(
    state: GameState, seat: int, card: int, left: list[int], auto: bool, now: int, events: Events
) -> None:
    state.hands[seat] = left
    state.discard.append(card)
    events.append(Discarded(seat, card, auto))
    if not left:
        _end_round(state, seat, EndReason.WENT_OUT, events)
    else:
        _end_turn(state, now, events)


def _timeout(state: GameState, seat: int, now: int, events: Events) -> None:
    if seat != SYSTEM:
        raise RuleError(Reason.NOT_YOUR_TURN, "Only the table clock ends a turn.")
    if state.phase not in (Phase.DRAW, Phase.PLAY):
        raise RuleError(Reason.NO_ROUND_IN_PLAY, "No turn is in play.")
    if now < state.deadline_ms:
        raise RuleError(Reason.TIMEOUT_NOT_DUE, "The turn has time left.")
    current = state.current
    card = auto_discard_choice(state) if state.phase == Phase.PLAY else -1
    if card < 0:
        events.append(TurnPassed(current, "timeout"))
        _end_turn(state, now, events)
        return
    left = list(state.hands[current])
    left.remove(card)
    _throw(state, current, card, left, True, now, events)


def auto_discard_choice(state: GameState) -> int:
    """RULES.md `cafe` decision: the highest-penalty non-joker card, never the card
    taken from the discard pile this turn; ties go to the card drawn this turn,
    then to the lowest id. -1 when no card qualifies (the turn then just passes)."""
    rules = state.ruleset
    best, best_key = -1, (-1, 0, 0)
    for card in state.hands[state.current]:
        if rules.deck.is_joker(card) or card == state.taken_discard:
            continue
        key = (card_penalty(card, rules), card == state.drawn, -card)
        if key > best_key:
            best, best_key = card, key
    return best


def _begin_turn(state: GameState, seat: int, now: int, events: Events) -> None:
    state.current = seat
    state.phase = Phase.DRAW
    state.turn += 1
    state.deadline_ms = now + state.options.turn_timer_ms
    state.taken_discard = state.drawn = -1
    events.append(TurnBegan(seat, state.turn, state.deadline_ms))


def _end_turn(state: GameState, now: int, events: Events) -> None:
    if state.turn >= state.options.turn_cap:
        _end_round(state, _lightest_hand(state), EndReason.TURN_CAP, events)
        return
    _begin_turn(state, state.next_playing(state.current), now, events)


def _lightest_hand(state: GameState) -> int:
    """Smallest hand penalty among playing seats; ties go to the lowest seat."""
    return min(state.playing(), key=lambda s: (hand_penalty(state.hands[s], state.ruleset), s))


# --- end of a round and of the game ----------------------------------------


def _end_round(state: GameState, winner: int, reason: EndReason, events: Events) -> None:
    rules = state.ruleset
    penalties = [0] * state.seats
    for s in state.playing():
        if s != winner:
            penalties[s] = hand_penalty(state.hands[s], rules)
            state.totals[s] += penalties[s]
    state.results.append(RoundResult(state.round_no, winner, reason.value, tuple(penalties)))
    state.deadline_ms = 0
    state.taken_discard = state.drawn = -1
    events.append(RoundEnded(state.round_no, winner, reason, tuple(penalties), tuple(state.totals)))
    _after_round(state, events)


def _after_round(state: GameState, events: Events) -> None:
    options = state.options
    if options.elimination_cap > 0:
        reached = [s for s in state.playing() if state.totals[s] >= options.elimination_cap]
        still = [s for s in state.playing() if s not in reached]
        for s in reached:
            state.status[s] = SeatStatus.ELIMINATED
            events.append(PlayerEliminated(s, state.totals[s]))
        if len(still) <= 1:
            pool = still or reached
            _end_game(
                state,
                min(pool, key=lambda s: (state.totals[s], s)),
                EndReason.LAST_STANDING,
                events,
            )
            return
    elif state.round_no >= options.rounds:
        winner = min(state.playing(), key=lambda s: (state.totals[s], s))
        _end_game(state, winner, EndReason.ROUNDS_PLAYED, events)
        return
    state.phase = Phase.DEAL
    state.dealer = state.next_playing(state.dealer)


def _end_game(state: GameState, winner: int, reason: EndReason, events: Events) -> None:
    state.phase = Phase.GAME_OVER
    state.winner = winner
    state.deadline_ms = 0
    events.append(GameEnded(winner, reason, tuple(state.totals)))


def _leave(state: GameState, seat: int, now: int, events: Events) -> None:
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    if not 0 <= seat < state.seats:
        raise RuleError(Reason.NOT_SEATED, "You have no seat at this table.")
    if state.status[seat] != SeatStatus.PLAYING:
        raise RuleError(Reason.SEAT_LEFT, "You have already left this table.")
    state.status[seat] = SeatStatus.LEFT
    events.append(PlayerLeft(seat))
    still = state.playing()
    if len(still) == 1:
        _end_game(state, still[0], EndReason.OTHERS_LEFT, events)
        return
    if state.phase in (Phase.DRAW, Phase.PLAY) and seat == state.current:
        events.append(TurnPassed(seat, "left"))
        _end_turn(state, now, events)
