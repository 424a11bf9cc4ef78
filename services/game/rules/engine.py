"""The referee: `apply(state, seat, action, now)` returns the next state and the
events the action caused, or raises `RuleError` and leaves ``state`` unchanged.

Each phase has its own small handler; every handler validates before it writes,
and works on a copy, so a refusal can never leave a half-applied action behind.
Rule-set differences are read from `state.ruleset`, never from its name.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from . import melds as M
from .actions import (
    SYSTEM,
    Action,
    Claim,
    Deal,
    Discard,
    DrawStock,
    LayOff,
    Leave,
    Meld,
    MeldSpec,
    Reposer,
    SwapJoker,
    TakeDiscard,
    Timeout,
)
from .errors import Reason, RuleError
from .events import (
    Claimed,
    ClaimMade,
    ClaimWindowOpened,
    Drew,
    EndReason,
    Event,
    JokerSwapped,
    LaidOff,
    Melded,
    PlayerLeft,
    Reposed,
    Reshuffled,
    RoundDealt,
    TurnPassed,
)
from .fairness import commitment
from .finder import candidates
from .legal import discardable, legal_actions
from .opening import check_laying, keep_one
from .rounds import end_game, end_round, lightest_hand
from .ruleset import JokerDiscard, Reshuffle
from .state import GameState, Phase, SeatStatus
from .turns import announce, begin_turn, end_turn, taken_card_owed, throw, turn_timeout

Events = list[Event]


def apply(state: GameState, seat: int, action: Action, now: int) -> tuple[GameState, Events]:
    """Apply ``action`` by ``seat`` (``SYSTEM`` for deal and timeout) at ``now`` (ms)."""
    new = state.copy()
    events: Events = []
    match action:
        case DrawStock():
            _draw_stock(new, seat, now, events)
        case TakeDiscard():
            _take_discard(new, seat, events)
        case Meld():
            _meld(new, seat, action, now, events)
        case LayOff():
            _lay_off(new, seat, action, now, events)
        case SwapJoker():
            _swap_joker(new, seat, action, now, events)
        case Discard():
            _discard(new, seat, action, now, events)
        case Reposer():
            _reposer(new, seat, events)
        case Claim():
            _claim(new, seat, action, now, events)
        case Timeout():
            _timeout(new, seat, now, events)
        case Deal():
            _deal(new, seat, action, now, events)
        case Leave():
            _leave(new, seat, now, events)
        case _:
            raise RuleError(Reason.ACTION_UNKNOWN, "That is not an action of this game.")
    if new.phase == Phase.PLAY and seat == new.current and _no_move(new):
        # Decision (no move): nothing to wait for; the clock's rule applies at once.
        new.deadline_ms = min(new.deadline_ms, now)
    return new, events


# --- guards -----------------------------------------------------------------


def _require_seat(state: GameState, seat: int) -> None:
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    if state.phase == Phase.DEAL:
        raise RuleError(Reason.NO_ROUND_IN_PLAY, "No round is in play yet.")
    if not 0 <= seat < state.seats:
        raise RuleError(Reason.NOT_SEATED, "You have no seat at this table.")
    if state.status[seat] != SeatStatus.PLAYING:
        raise RuleError(Reason.SEAT_LEFT, "You are no longer playing at this table.")


def _require_turn(state: GameState, seat: int, phase: Phase) -> None:
    _require_seat(state, seat)
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
    keep_one(state, len(left))


def _require_opened(state: GameState, seat: int, doing: str) -> None:
    if not state.opened[seat]:
        first = "your contract" if state.ruleset.contracts else "a meld of your own"
        raise RuleError(Reason.NOT_OPENED, f"Lay down {first} before you {doing}.")


def _after_play(state: GameState, seat: int, used: Sequence[int], now: int, events: Events) -> None:
    """Book-keeping after a meld, lay-off or swap: the taken card, "Carte !", going out."""
    state.moved = True
    if state.taken_discard in used:
        state.taken_used = True
    announce(state, seat, events)
    if not state.hands[seat]:
        _close_claims(state, events)
        end_round(state, seat, EndReason.WENT_OUT, events)


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
    for _ in range(rules.cards_dealt(state.round_no + 1)):
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
    state.claim_card = -1
    state.claimants = []
    state.deal_order = tuple(action.order)
    state.deal_salt = action.salt.hex()
    events.append(
        RoundDealt(
            state.round_no,
            state.dealer,
            tuple(tuple(h) for h in state.hands),
            state.discard[-1],
            len(state.stock),
            commitment(action.order, action.seed, action.salt),
        )
    )
    begin_turn(state, players[0], now, events)


def _seats_from(state: GameState, start: int) -> list[int]:
    order = [(start + i) % state.seats for i in range(state.seats)]
    return [s for s in order if state.status[s] == SeatStatus.PLAYING]


# --- drawing ----------------------------------------------------------------


def _rebuild_stock(state: GameState, events: Events) -> bool:
    """Turn the discard pile into a new stock; False when the rules or the pile forbid."""
    rules = state.ruleset
    limit = rules.max_reshuffles
    keep_top = rules.reshuffle is Reshuffle.KEEP_TOP
    if len(state.discard) < (2 if keep_top else 1) or (
        limit is not None and state.reshuffles >= limit
    ):
        return False
    stock = state.discard[:-1] if keep_top else state.discard[:]
    state.discard = state.discard[-1:] if keep_top else []
    random.Random(state.seed * 1009 + state.reshuffles).shuffle(stock)
    state.stock = stock
    state.reshuffles += 1
    events.append(Reshuffled(len(stock), state.discard[-1] if state.discard else -1))
    return True


def _draw_stock(state: GameState, seat: int, now: int, events: Events) -> None:
    _require_turn(state, seat, Phase.DRAW)
    if not state.stock and not _rebuild_stock(state, events):
        if state.ruleset.blocked_deal:
            end_round(state, lightest_hand(state), EndReason.BLOCKED, events)
            return
        raise RuleError(Reason.STOCK_EMPTY, "The stock is empty: take the discard.")
    card = state.stock.pop()
    state.drawn = card
    state.hands[seat].append(card)
    state.phase = Phase.PLAY
    events.append(Drew(seat, card, False, len(state.stock)))
    if state.ruleset.claims and state.discard:
        state.claim_card = state.discard[-1]
        state.claim_deadline_ms = now + state.options.claim_window_ms
        state.claimants = []
        events.append(ClaimWindowOpened(state.claim_card, state.claim_deadline_ms))


def _take_discard(state: GameState, seat: int, events: Events) -> None:
    _require_turn(state, seat, Phase.DRAW)
    if state.reposed:
        raise RuleError(Reason.REPOSER_NOT_ALLOWED, "You put that card back: draw from the stock.")
    if not state.discard:
        raise RuleError(Reason.DISCARD_EMPTY, "The discard pile is empty: draw from the stock.")
    card = state.discard.pop()
    state.taken_discard = state.drawn = card
    state.hands[seat].append(card)
    state.phase = Phase.PLAY
    events.append(Drew(seat, card, True, len(state.stock)))


def _reposer(state: GameState, seat: int, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    if not state.ruleset.reposer:
        raise RuleError(Reason.RULE_NOT_IN_PLAY, "Putting the discard back is not in these rules.")
    if not taken_card_owed(state) or state.moved:
        raise RuleError(
            Reason.REPOSER_NOT_ALLOWED,
            "Only a discard you took before opening goes back, and before any other move.",
        )
    card = state.taken_discard
    state.hands[seat].remove(card)
    state.discard.append(card)
    state.taken_discard = state.drawn = -1
    state.reposed = True
    state.phase = Phase.DRAW
    events.append(Reposed(seat, card))


# --- "Puis-je ?" claims (contract) -------------------------------------------


def _claim(state: GameState, seat: int, action: Claim, now: int, events: Events) -> None:
    _require_seat(state, seat)
    deck = state.ruleset.deck
    if not state.ruleset.claims:
        raise RuleError(Reason.RULE_NOT_IN_PLAY, "Claiming the discard is not in these rules.")
    if not deck.is_card(action.card):
        raise RuleError(Reason.CARD_UNKNOWN, f"There is no card {action.card} in this game.")
    if state.claim_card < 0 or now >= state.claim_deadline_ms:
        raise RuleError(Reason.CLAIM_NOT_ALLOWED, "No discard can be claimed right now.")
    if action.card != state.claim_card:
        # The claimant saw an earlier window: asking for the card on offer now
        # would claim a card they never chose.
        raise RuleError(
            Reason.CLAIM_CARD_CHANGED,
            f"The card on offer is now {deck.code(state.claim_card)}: look again before"
            " you claim it.",
        )
    if seat == state.current:
        raise RuleError(Reason.CLAIM_NOT_ALLOWED, "You passed over that card yourself.")
    if seat in state.claimants:
        raise RuleError(Reason.CLAIM_NOT_ALLOWED, "You have already claimed it.")
    state.claimants.append(seat)
    events.append(ClaimMade(seat))


def _close_claims(state: GameState, events: Events) -> None:
    """Settle the window by the rule, not by arrival: the claimant nearest to the
    active player in play order takes the card and one penalty card."""
    if state.claim_card < 0:
        return
    card, claimants = state.claim_card, set(state.claimants)
    state.claim_card, state.claimants = -1, []
    winner = next((s for s in _seats_from(state, state.current + 1) if s in claimants), None)
    if winner is None or not state.discard or state.discard[-1] != card:
        return
    state.discard.pop()
    penalty = -1
    if state.stock or _rebuild_stock(state, events):
        penalty = state.stock.pop()
        state.hands[winner].append(penalty)
    state.hands[winner].append(card)
    events.append(Claimed(winner, card, penalty))


# --- melding ----------------------------------------------------------------


def _shape(spec: MeldSpec, state: GameState) -> M.Shape:
    return M.check_meld(spec.cards, state.ruleset, spec.joker_suits, spec.kind)


def _meld(state: GameState, seat: int, action: Meld, now: int, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    if not action.melds:
        raise RuleError(Reason.NOTHING_TO_MELD, "Name the cards of at least one meld.")
    cards = [c for spec in action.melds for c in spec.cards]
    left = _take_from_hand(state.hands[seat], cards, state)
    shapes = [_shape(spec, state) for spec in action.melds]
    check_laying(state, seat, shapes, cards, len(left))
    placed = tuple(_place(state, seat, shape) for shape in shapes)
    state.hands[seat] = left
    state.opened[seat] = True
    events.append(Melded(seat, placed))
    _after_play(state, seat, cards, now, events)


def _place(state: GameState, seat: int, shape: M.Shape) -> M.Meld:
    meld = shape.place(state.next_meld_id, seat)
    state.next_meld_id += 1
    state.melds.append(meld)
    return meld


def _table_meld(state: GameState, meld_id: int) -> int:
    index = state.meld(meld_id)
    if index < 0:
        raise RuleError(Reason.MELD_NOT_FOUND, f"There is no meld {meld_id} on the table.")
    return index


def _lay_off(state: GameState, seat: int, action: LayOff, now: int, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    _require_opened(state, seat, "lay off")
    index = _table_meld(state, action.meld_id)
    left = _take_from_hand(state.hands[seat], action.cards, state)
    meld = M.lay_off(state.melds[index], action.cards, action.side, state.ruleset)
    _keep_one(state, left)
    state.melds[index] = meld
    state.hands[seat] = left
    events.append(LaidOff(seat, action.cards, meld))
    _after_play(state, seat, action.cards, now, events)


def _swapped(state: GameState, action: SwapJoker) -> M.Meld:
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
    return M.swap_joker(meld, action.joker, action.replacement, rules)


def _swap_joker(state: GameState, seat: int, action: SwapJoker, now: int, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    _require_opened(state, seat, "swap a joker")
    rules = state.ruleset
    index = _table_meld(state, action.meld_id)
    put_in = [action.replacement] + ([action.second] if action.second >= 0 else [])
    left = _take_from_hand(state.hands[seat], put_in, state)
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
    left = _take_from_hand(left, [c for c in placement if c != action.joker], state)
    if placement:
        _keep_one(state, left)
    state.melds[index] = swapped
    after: Event | None = None
    placed_in: M.Meld | None = None
    if action.new_meld is not None:
        placed_in = _place(state, seat, _shape(action.new_meld, state))
        after = Melded(seat, (placed_in,))
    elif action.lay_off is not None:
        target = _table_meld(state, action.lay_off.meld_id)
        placed_in = M.lay_off(state.melds[target], placement, action.lay_off.side, rules)
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


# --- discarding, the clock, leaving ------------------------------------------


def _discard(state: GameState, seat: int, action: Discard, now: int, events: Events) -> None:
    _require_turn(state, seat, Phase.PLAY)
    left = _take_from_hand(state.hands[seat], [action.card], state)
    rules = state.ruleset
    if action.card == state.taken_discard:
        raise RuleError(
            Reason.DISCARD_TAKEN_CARD,
            "You cannot throw back the card you just took from the discard pile.",
        )
    if taken_card_owed(state):
        but = " or put it back" if rules.reposer and not state.moved else ""
        raise RuleError(
            Reason.TAKEN_CARD_UNUSED,
            f"Use the card you took from the discard pile in a meld first{but}.",
        )
    last_only = rules.joker_discard is JokerDiscard.LAST_CARD_ONLY
    if rules.deck.is_joker(action.card) and left and last_only:
        raise RuleError(
            Reason.JOKER_DISCARD_FORBIDDEN,
            "A joker can only be discarded as your last card, to go out.",
        )
    _close_claims(state, events)
    state.hands[seat].remove(action.card)
    throw(state, seat, action.card, False, now, events)


def _no_move(state: GameState) -> bool:
    """The player holding the turn after the draw can certainly do nothing: no
    card may be discarded (only jokers, or only a card that must be used first),
    the hand holds no meld at all, no joker on the table could be taken (by a
    natural card of the hand), and no lay-off or put-back is open. A hand that
    holds a meld may need several laid together to open: it is left to the
    clock. Cheap unless nothing may be discarded."""
    seat = state.current
    hand = state.hands[seat]
    if discardable(state, hand) or candidates(hand, state.ruleset):
        return False
    deck = state.ruleset.deck
    naturals = not all(deck.is_joker(c) for c in hand)
    if (
        state.opened[seat]
        and naturals
        and any(deck.is_joker(c) for m in state.melds for c in m.cards)
    ):
        return False
    return not legal_actions(state, seat)


def _timeout(state: GameState, seat: int, now: int, events: Events) -> None:
    if seat != SYSTEM:
        raise RuleError(Reason.NOT_YOUR_TURN, "Only the table clock ends a turn.")
    if state.phase not in (Phase.DRAW, Phase.PLAY):
        raise RuleError(Reason.NO_ROUND_IN_PLAY, "No turn is in play.")
    claims_due = state.claim_card >= 0 and now >= state.claim_deadline_ms
    if now < state.deadline_ms and not claims_due:
        raise RuleError(Reason.TIMEOUT_NOT_DUE, "The turn has time left.")
    _close_claims(state, events)
    if now >= state.deadline_ms:
        stuck = state.phase == Phase.PLAY and _no_move(state)
        turn_timeout(state, now, events, "no_move" if stuck else "timeout")


def _leave(state: GameState, seat: int, now: int, events: Events) -> None:
    if state.phase == Phase.GAME_OVER:
        raise RuleError(Reason.GAME_OVER, "The game is over.")
    if not 0 <= seat < state.seats:
        raise RuleError(Reason.NOT_SEATED, "You have no seat at this table.")
    if state.status[seat] != SeatStatus.PLAYING:
        raise RuleError(Reason.SEAT_LEFT, "You have already left this table.")
    state.status[seat] = SeatStatus.LEFT
    if seat in state.claimants:
        state.claimants.remove(seat)
    events.append(PlayerLeft(seat))
    still = state.playing()
    if len(still) == 1:
        end_game(state, still[0], EndReason.OTHERS_LEFT, events)
        return
    if state.phase in (Phase.DRAW, Phase.PLAY) and seat == state.current:
        _close_claims(state, events)
        events.append(TurnPassed(seat, "left"))
        end_turn(state, now, events)
