"""Property tests: random full games between random and greedy players, with the
invariants of the engine checked after every action.

- every one of the 110 cards is in exactly one place while a round is in play;
- no view and no filtered event shows a card of another seat's hand or of the stock;
- refused actions (tried at every step) raise `RuleError` with the expected
  reason and leave the state byte-identical;
- every move `legal_actions` offers is accepted;
- every round ends, by going out or at the turn cap, within a bounded number of steps.

The number of games is kept small so the suite stays fast; set ``RULES_GAMES``
(e.g. ``RULES_GAMES=2000``) to play thousands.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterable
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.game.rules import (
    SYSTEM,
    Action,
    Discard,
    DrawStock,
    GameState,
    LayOff,
    Meld,
    MeldSpec,
    Phase,
    Reason,
    RuleError,
    SwapJoker,
    TableOptions,
    TakeDiscard,
    Timeout,
    apply,
    legal_actions,
    new_game,
    view,
)
from services.game.rules.bots import GreedyBot, RandomPlayer
from services.game.rules.events import HIDDEN, DeckRevealed, EndReason, Event, RoundEnded
from services.game.rules.fairness import commitment, verify_deck
from services.game.rules.melds import TableMeld, check_meld, joker_targets
from services.game.rules.serial import dumps
from services.game.rules.simulate import Player, deal_action

from .helpers import CAFE, assert_conserved, playing
from .scores import check_game_end, check_round_scores

GAMES = int(os.environ.get("RULES_GAMES", "40"))

# Fields that hold card ids, fields that hold table melds, and fields that hold
# no card. Every field of every view and event must be in one of them, so a new
# field cannot slip past the leak check unclassified.
CARD_FIELDS = {"hand", "hands", "cards", "discard", "card", "discard_top", "joker", "replacement"}
CARD_FIELDS |= {"taken_discard", "penalty", "order", "second"}
MELD_FIELDS = {"melds", "meld", "placed_in"}
PLAIN_FIELDS = {
    "viewer",
    "seat",
    "turn",
    "deadline_ms",
    "round_no",
    "dealer",
    "stock_size",
    "from_discard",
    "automatic",
    "reason",
    "winner",
    "penalties",
    "totals",
    "total",
    "hand_sizes",
    "phase",
    "current",
    "turn_cap",
    "opened",
    "status",
    "results",
    "closes_ms",
    "commitment",
    "seed",
    "salt",
    "used",
    "opening_points",
    "count",
    "doubled",
    "note",  # an operator's words (`EndTable`): text, never a card
}

MAX_ACTIONS_PER_TURN = 2 + 2 * 14
"""A draw, a discard, and at most one meld, lay-off or swap per card held (each
takes at least one card from the hand); generous for hands that grew."""


def _ints(value: Any) -> Iterable[int]:
    if isinstance(value, int):
        yield value
    else:
        for item in value:
            yield from _ints(item)


def cards_shown(obj: Any) -> set[int]:
    """Every card id a view or an event carries (HIDDEN excluded)."""
    assert is_dataclass(obj)
    shown: set[int] = set()
    for f in fields(obj):
        value = getattr(obj, f.name)
        if f.name in CARD_FIELDS:
            shown.update(c for c in _ints(value) if c != HIDDEN)
        elif f.name in MELD_FIELDS:
            for meld in [value] if isinstance(value, TableMeld) else value or ():
                shown.update(meld.cards)
                shown.update(j for j, _ in meld.joker_suits)
        else:
            assert f.name in PLAIN_FIELDS, f"classify {type(obj).__name__}.{f.name}"
    return shown


def hidden_from(state: GameState, viewer: int | None) -> set[int]:
    hidden = set(state.stock)
    for seat, hand in enumerate(state.hands):
        if seat != viewer:
            hidden.update(hand)
    return hidden


def check_views(state: GameState) -> None:
    for viewer in [*range(state.seats), None]:
        seen = view(state, viewer)
        leaked = cards_shown(seen) & hidden_from(state, viewer)
        assert not leaked, f"view for {viewer} leaks {sorted(leaked)}"
        if viewer is not None:
            assert list(seen.hand) == state.hands[viewer]
        assert seen.hand_sizes == tuple(len(h) for h in state.hands)


def check_events(before: GameState, action: Action, after: GameState, events: list[Event]) -> None:
    # The card taken from the discard pile was face up: showing it is no leak.
    public = {before.discard[-1]} if isinstance(action, TakeDiscard) else set()
    for viewer in [*range(after.seats), None]:
        hidden = hidden_from(after, viewer) - public
        for event in events:
            seen = event.visible_to(viewer)
            assert type(seen) is type(event)
            if isinstance(event, DeckRevealed):
                # Shown to all once the round is over, to check the deal's commitment.
                assert after.phase in (Phase.DEAL, Phase.GAME_OVER)
                assert verify_deck(event.order, event.seed, event.salt, dealt_commitment(before))
                continue
            leaked = cards_shown(hands_left_checked(seen, after)) & hidden
            assert not leaked, f"{type(event).__name__} shows {sorted(leaked)} to {viewer}"


def hands_left_checked(seen: Event, after: GameState) -> Event:
    """``seen`` without the hands a RoundEnded lays face up, once they are checked:
    shown to every viewer only once the round is over, and exactly what each seat
    held then (the next deal comes after, in a move of its own)."""
    if not isinstance(seen, RoundEnded):
        return seen
    assert after.phase in (Phase.DEAL, Phase.GAME_OVER)
    assert seen.hands == tuple(tuple(h) for h in after.hands)
    return replace(seen, hands=())


def dealt_commitment(state: GameState) -> str:
    return commitment(state.deal_order, state.seed, bytes.fromhex(state.deal_salt))


def check_refused(state: GameState, seat: int, action: Action, now: int, *reasons: Reason) -> None:
    before = dumps(state)
    with pytest.raises(RuleError) as caught:
        apply(state, seat, action, now)
    assert caught.value.reason in reasons, (action, caught.value)
    assert caught.value.message
    assert dumps(state) == before, f"refused {action} changed the state"


def try_illegal(state: GameState, rng: random.Random, now: int) -> None:
    """A few actions that must be refused, chosen at random for this state."""
    deck = CAFE.deck
    if state.phase == Phase.GAME_OVER:
        check_refused(state, 0, DrawStock(), now, Reason.GAME_OVER)
        return
    if state.phase == Phase.DEAL:
        check_refused(state, 0, DrawStock(), now, Reason.NO_ROUND_IN_PLAY)
        check_refused(state, SYSTEM, Timeout(), now, Reason.NO_ROUND_IN_PLAY)
        return
    seat = state.current
    hand = state.hands[seat]
    others = [s for s in playing(state) if s != seat]
    elsewhere = [c for s in range(state.seats) if s != seat for c in state.hands[s]]
    elsewhere += state.stock
    drawn = state.phase == Phase.PLAY
    for _ in range(3):
        kind = rng.randrange(9)
        if kind == 0 and others:  # wrong seat
            other = rng.choice(others)
            moves: list[Action] = [DrawStock(), TakeDiscard()]
            moves.append(Discard(rng.choice(state.hands[other])))
            action: Action = rng.choice(moves)
            check_refused(state, other, action, now, Reason.NOT_YOUR_TURN)
        elif kind == 1 and elsewhere:  # a card not in hand
            card = rng.choice(elsewhere)
            want = Reason.CARD_NOT_IN_HAND if drawn else Reason.MUST_DRAW_FIRST
            check_refused(state, seat, Discard(card), now, want)
        elif kind == 2 and drawn:  # a joker that is not the last card
            jokers = [c for c in hand if deck.is_joker(c) and c != state.taken_discard]
            if jokers and len(hand) > 1:
                check_refused(state, seat, Discard(jokers[0]), now, Reason.JOKER_DISCARD_FORBIDDEN)
        elif kind == 3 and drawn and len(hand) >= 3:  # garbage meld
            cards = tuple(rng.sample(hand, min(len(hand), rng.choice([3, 3, 4]))))
            try:
                check_meld(cards, CAFE)
            except RuleError as error:
                check_refused(state, seat, Meld((MeldSpec(cards),)), now, error.reason)
        elif kind == 4 and drawn and not state.opened[seat] and state.melds:
            meld = rng.choice(state.melds)
            action = LayOff(meld.id, (rng.choice(hand),))
            check_refused(state, seat, action, now, Reason.NOT_OPENED)
        elif kind == 5 and now < state.deadline_ms:
            check_refused(state, SYSTEM, Timeout(), now, Reason.TIMEOUT_NOT_DUE)
        elif kind == 6 and drawn and state.taken_discard in hand:
            check_refused(state, seat, Discard(state.taken_discard), now, Reason.DISCARD_TAKEN_CARD)
        elif kind == 8 and drawn and state.opened[seat]:  # swaps that must fail
            for meld in state.melds:
                for joker in (c for c in meld.cards if deck.is_joker(c)):
                    targets = joker_targets(meld, joker, CAFE)
                    exact = [c for c in hand if (deck.rank[c], deck.suit[c]) in targets]
                    wrong = [c for c in hand if c not in exact and not deck.is_joker(c)]
                    if exact:  # the joker placed twice
                        twice = SwapJoker(
                            meld.id, joker, exact[0], lay_off=LayOff(meld.id, (joker, joker))
                        )
                        check_refused(state, seat, twice, now, Reason.CARD_DUPLICATED)
                    if wrong:  # not the card the joker stands for
                        swap = SwapJoker(
                            meld.id, joker, wrong[0], lay_off=LayOff(meld.id, (joker,))
                        )
                        check_refused(state, seat, swap, now, Reason.SWAP_INVALID)
        elif kind == 7:
            want = Reason.ALREADY_DREW if drawn else Reason.MUST_DRAW_FIRST
            action = DrawStock() if drawn else Meld((MeldSpec(tuple(hand[:3])),))
            check_refused(state, seat, action, now, want)


def check_legal_actions(state: GameState, now: int) -> None:
    """Every move `legal_actions` offers is accepted by `apply`."""
    for action in legal_actions(state, state.current):
        try:
            apply(state, state.current, action, now)
        except RuleError as error:  # pragma: no cover - a failure message
            pytest.fail(f"legal_actions offered {action}, apply refused it: {error!r}")


@dataclass(frozen=True)
class Setup:
    kinds: tuple[str, ...]
    seed: int
    rounds: int
    timeout_rate: float


@st.composite
def setups(draw: st.DrawFn) -> Setup:
    seats = draw(st.integers(2, 4))
    kinds = draw(st.lists(st.sampled_from(["random", "greedy"]), min_size=seats, max_size=seats))
    return Setup(
        kinds=tuple(kinds),
        seed=draw(st.integers(0, 2**32 - 1)),
        rounds=draw(st.sampled_from([1, 1, 2])),
        timeout_rate=draw(st.sampled_from([0.0, 0.0, 0.05])),
    )


def players_for(setup: Setup, rng: random.Random) -> list[Player]:
    return [RandomPlayer(rng) if k == "random" else GreedyBot() for k in setup.kinds]


def play_checked(setup: Setup) -> set[str]:
    """Play one game checking every invariant; the names of the actions and events seen."""
    rng = random.Random(setup.seed)
    checks = random.Random(setup.seed ^ 0x5EED)
    players = players_for(setup, rng)
    state = new_game(CAFE, len(setup.kinds), TableOptions(rounds=setup.rounds))
    turn_cap = state.options.turn_cap
    now = 0
    steps_this_round = 0
    seen: set[str] = set()
    for _ in range(setup.rounds * (turn_cap * MAX_ACTIONS_PER_TURN + 1)):
        if state.phase == Phase.GAME_OVER:
            break
        try_illegal(state, checks, now)
        seat: int
        action: Action | None
        if state.phase == Phase.DEAL:
            seat, action = SYSTEM, deal_action(state, rng)
        else:
            seat = state.current
            timed_out = checks.random() < setup.timeout_rate
            action = None if timed_out else players[seat].move(state, seat)
            if checks.random() < 0.05:
                check_legal_actions(state, now)
        if action is None:
            seat, action, now = SYSTEM, Timeout(), state.deadline_ms
        new, events = apply(state, seat, action, now)
        seen.add(type(action).__name__)
        seen.update(type(e).__name__ for e in events)
        check_events(state, action, new, events)
        check_views(new)
        assert_conserved(new)
        if state.phase != Phase.GAME_OVER:
            check_game_end(new, events)
        steps_this_round += 1
        assert steps_this_round <= turn_cap * MAX_ACTIONS_PER_TURN + 1
        for event in events:
            if isinstance(event, RoundEnded):
                check_round_scores(state, new, event)
                assert event.reason in (EndReason.WENT_OUT, EndReason.TURN_CAP)
                if event.reason == EndReason.TURN_CAP:
                    assert new.turn == turn_cap
                else:
                    assert new.hands[event.winner] == [] and new.turn <= turn_cap
                steps_this_round = 0
        state = new
    assert state.phase == Phase.GAME_OVER, "the game did not end within its bound"
    assert len(state.results) == setup.rounds
    return seen


@settings(
    max_examples=GAMES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(setups())
def test_random_full_games_keep_every_invariant(setup: Setup) -> None:
    play_checked(setup)


def test_the_checked_games_reach_swaps_reshuffles_and_timeouts() -> None:
    """The properties above only mean something if games reach these paths."""
    seen: set[str] = set()
    for seed in range(3):
        seen |= play_checked(Setup(("random",) * 4, seed, 1, 0.05))
        seen |= play_checked(Setup(("greedy", "random", "greedy"), seed, 2, 0.05))
    wanted = {"Reshuffled", "JokerSwapped", "LaidOff", "Melded", "TurnPassed", "Discarded"}
    assert wanted <= seen
    assert {"SwapJoker", "LayOff", "Meld", "Timeout", "TakeDiscard", "DrawStock"} <= seen
