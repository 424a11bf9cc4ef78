"""The property tests of test_properties.py for `rami51`, `classic` and `contract`:
random full games between random and greedy players (and, in `contract`, seats
that claim the discard at random), with the invariants checked after every
action:

- tables of 2 to 4 seats, and of 5 or 6 where the rule set allows them
  (`classic`, `contract`);
- every card of the 108-card (`rami51`, `classic`) or 105-card (`contract`;
  158 at 5 or 6 seats) deck is in exactly one place: a hand, the stock, the
  discard pile or a meld;
- every round is scored as the rules say (tests/rules/scores.py), and a game
  that ends has one winner;
- no view and no filtered event shows a card of another seat's hand or of the
  stock (a claim's penalty card included);
- refused actions, tried at every step, raise `RuleError` with the reason the
  rule set gives and leave the state byte-identical;
- every move `legal_actions` offers is accepted;
- every round ends (out, blocked, or at the turn cap) and every game ends,
  within a bounded number of steps.

Example counts are small and the examples fixed so the suite stays fast and its
time steady; ``RULES_GAMES`` (e.g. 2000) multiplies the counts, as in
test_properties.py, and draws new examples on every run.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

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
    TableOptions,
    TakeDiscard,
    Timeout,
    apply,
    legal_actions,
    new_game,
    preset,
)
from services.game.rules.actions import Claim, Reposer
from services.game.rules.bots import GreedyBot, RandomPlayer
from services.game.rules.claims import may_claim
from services.game.rules.contract import check_contract
from services.game.rules.events import (
    Claimed,
    DeckRevealed,
    Drew,
    EndReason,
    Event,
    RoundEnded,
)
from services.game.rules.finder import candidates
from services.game.rules.melds import check_meld
from services.game.rules.ruleset import JokerDiscard
from services.game.rules.scoring import meld_points
from services.game.rules.serial import dumps
from services.game.rules.simulate import Player, deal_action
from services.game.rules.turns import taken_card_owed

from .helpers import assert_conserved, playing
from .scores import check_game_end, check_round_scores
from .test_properties import cards_shown, check_views, hands_left_checked, hidden_from

SCALE = int(os.environ.get("RULES_GAMES", "40")) / 40
EXAMPLES = {"rami51": 20, "classic": 6, "contract": 6}
"""Per rule set, chosen to keep this file near 20 s on one core."""

ACTIONS_PER_TURN = 2 + 2 + 2 * 40 + 4 + 1
"""A draw (two with a Reposer), a discard, one meld, lay-off or swap per card held
(claims can grow a hand well past its deal), a claim per other seat and the
window's own timeout."""

MAX_ROUNDS = {"rami51": 60, "classic": 400, "contract": 7}
"""Deals a game may take. "To 200" ends in a few deals; `classic` with buy-backs
can take a hundred or more, as a bought-back player restarts at the highest
total still in the game, which a winning player keeps pushing below zero."""


def deck_size(name: str, seats: int) -> int:
    """RULES.md: 108 cards in `rami51` and `classic`; `contract` 105, and 158 (three
    packs, two jokers) at 5 or 6 seats."""
    if name == "contract":
        return 158 if seats >= 5 else 105
    return 108


def check_refused(state: GameState, seat: int, action: Action, now: int, *reasons: Reason) -> None:
    before = dumps(state)
    with pytest.raises(RuleError) as caught:
        apply(state, seat, action, now)
    assert caught.value.reason in reasons, (action, caught.value)
    assert caught.value.message
    assert dumps(state) == before, f"refused {action} changed the state"


def try_illegal(state: GameState, rng: random.Random, now: int) -> None:
    """A few actions the rule set must refuse, chosen at random for this state."""
    rules = state.ruleset
    deck = rules.deck
    if state.phase == Phase.GAME_OVER:
        check_refused(state, 0, DrawStock(), now, Reason.GAME_OVER)
        check_refused(state, 0, Claim(0), now, Reason.GAME_OVER)
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
    owed = drawn and taken_card_owed(state)
    for _ in range(3):
        kind = rng.randrange(12)
        if kind == 0 and others:  # the wrong seat
            other = rng.choice(others)
            action: Action = rng.choice([DrawStock(), TakeDiscard()])
            if state.hands[other]:
                action = rng.choice([action, Discard(rng.choice(state.hands[other]))])
            check_refused(state, other, action, now, Reason.NOT_YOUR_TURN)
        elif kind == 1 and elsewhere:  # a card not in hand
            want = Reason.CARD_NOT_IN_HAND if drawn else Reason.MUST_DRAW_FIRST
            check_refused(state, seat, Discard(rng.choice(elsewhere)), now, want)
        elif kind == 2 and drawn and rules.joker_discard is JokerDiscard.LAST_CARD_ONLY:
            jokers = [c for c in hand if deck.is_joker(c) and c != state.taken_discard]
            if jokers and len(hand) > 1:
                want = Reason.TAKEN_CARD_UNUSED if owed else Reason.JOKER_DISCARD_FORBIDDEN
                check_refused(state, seat, Discard(jokers[0]), now, want)
        elif kind == 3 and drawn and len(hand) >= 3:  # a meld that is no meld
            cards = tuple(rng.sample(hand, min(len(hand), rng.choice([3, 3, 4]))))
            try:
                check_meld(cards, rules)
            except RuleError as error:
                check_refused(state, seat, Meld((MeldSpec(cards),)), now, error.reason)
        elif kind == 4 and drawn and not state.opened[seat] and state.melds and hand:
            action = LayOff(rng.choice(state.melds).id, (rng.choice(hand),))
            check_refused(state, seat, action, now, Reason.NOT_OPENED)
        elif kind == 5 and now < state.deadline_ms:
            if not (state.claim_card >= 0 and now >= state.claim_deadline_ms):
                check_refused(state, SYSTEM, Timeout(), now, Reason.TIMEOUT_NOT_DUE)
        elif kind == 6 and drawn and state.taken_discard in hand:
            check_refused(state, seat, Discard(state.taken_discard), now, Reason.DISCARD_TAKEN_CARD)
        elif kind == 7:
            want = Reason.ALREADY_DREW if drawn else Reason.MUST_DRAW_FIRST
            action = DrawStock() if drawn else Meld((MeldSpec(tuple(hand[:3])),))
            check_refused(state, seat, action, now, want)
        elif kind == 8 and drawn:  # Reposer: `rami51` only, and only for a card owed
            if not rules.reposer:
                check_refused(state, seat, Reposer(), now, Reason.RULE_NOT_IN_PLAY)
            elif not owed or state.moved:
                check_refused(state, seat, Reposer(), now, Reason.REPOSER_NOT_ALLOWED)
        elif kind == 9:  # claims: `contract` only, never by the active seat
            # Any card when no window is open: the window is judged first.
            offered = Claim(max(state.claim_card, 0))
            if not rules.claims:
                claimer = rng.choice(playing(state))
                check_refused(state, claimer, offered, now, Reason.RULE_NOT_IN_PLAY)
            else:
                window = state.claim_card >= 0 and now < state.claim_deadline_ms
                mine = Reason.CLAIM_NOT_ALLOWED if window else Reason.CLAIM_WINDOW_CLOSED
                check_refused(state, seat, offered, now, mine)
                for other in state.claimants:
                    check_refused(state, other, offered, now, mine)
                thrower = state.top_discarder
                if thrower >= 0 and thrower != seat and thrower in playing(state):
                    check_refused(state, thrower, offered, now, mine)
                waiting = [s for s in playing(state) if may_claim(state, s)]
                if window and waiting:
                    changed = Claim((state.claim_card + 1) % deck.size)
                    check_refused(state, waiting[0], changed, now, Reason.CLAIM_CARD_CHANGED)
        elif kind == 10 and owed:  # the taken card must be used before any discard
            rest = [c for c in hand if c != state.taken_discard]
            if rest:
                check_refused(state, seat, Discard(rng.choice(rest)), now, Reason.TAKEN_CARD_UNUSED)
        elif kind == 11 and drawn and not state.opened[seat]:
            _try_short_opening(state, rng, now)


def _try_short_opening(state: GameState, rng: random.Random, now: int) -> None:
    """One meld that does not open: under the threshold, or not the deal's contract."""
    rules = state.ruleset
    seat = state.current
    hand = state.hands[seat]
    shapes = candidates(hand, rules)
    rng.shuffle(shapes)
    contract = rules.contract(state.round_no)
    for shape in shapes[:20]:
        left = len(hand) - len(shape.cards)
        action = Meld((MeldSpec(shape.cards),))
        if contract is not None:
            if left == 0:
                continue
            try:
                check_contract([shape], contract, left)
            except RuleError:
                check_refused(state, seat, action, now, Reason.CONTRACT_UNMET)
                return
        elif (
            (left > 0 or not rules.must_discard_to_go_out)
            and left > rules.opening_exempt_left
            and meld_points(shape, rules) < state.options.opening_threshold
        ):
            check_refused(state, seat, action, now, Reason.OPENING_TOO_LOW)
            return


def check_events(before: GameState, after: GameState, events: list[Event]) -> None:
    """No event, as filtered for a viewer, shows that viewer a card it may not see.
    A card that was face up on the discard pile and did not go back into the
    stock (taken, claimed, put back) is public; one drawn from the stock is not."""
    drawn = {e.card for e in events if isinstance(e, Drew) and not e.from_discard}
    drawn |= {e.penalty for e in events if isinstance(e, Claimed)}
    public = set(before.discard) - set(after.stock) - drawn
    for viewer in [*range(after.seats), None]:
        hidden = hidden_from(after, viewer) - public
        for event in events:
            seen = event.visible_to(viewer)
            assert type(seen) is type(event)
            if isinstance(event, DeckRevealed):
                # The whole deal, shown once the round is over (fairness.py).
                assert after.phase in (Phase.DEAL, Phase.GAME_OVER)
                continue
            leaked = cards_shown(hands_left_checked(seen, after)) & hidden
            assert not leaked, f"{type(event).__name__} shows {sorted(leaked)} to {viewer}"


def check_legal_actions(state: GameState, now: int) -> None:
    """Every move `legal_actions` offers any seat is accepted by `apply`."""
    for seat in playing(state):
        for action in legal_actions(state, seat):
            try:
                apply(state, seat, action, now)
            except RuleError as error:  # pragma: no cover - a failure message
                pytest.fail(f"legal_actions offered {action} to {seat}, refused: {error!r}")


@dataclass(frozen=True)
class Setup:
    ruleset: str
    kinds: tuple[str, ...]
    seed: int
    options: TableOptions
    timeout_rate: float
    claim_rate: float


@st.composite
def setups(draw: st.DrawFn, name: str) -> Setup:
    # 5 and 6 seats where the rule set allows them (`classic`, `contract`).
    seats = draw(st.integers(2, preset(name).max_players))
    kinds = draw(st.lists(st.sampled_from(["random", "greedy"]), min_size=seats, max_size=seats))
    cap = draw(st.sampled_from([120, 120, 40]))
    if name == "rami51":
        threshold = draw(st.sampled_from([30, 40, 51]))
        target = draw(st.sampled_from([0, 0, 200]))
        options = TableOptions(turn_cap=cap, opening_threshold=threshold, target_score=target)
    elif name == "classic":
        # Buy-backs can make a game last a hundred deals (see MAX_ROUNDS): with
        # them, a lower elimination cap (a table option) keeps it short.
        buy_backs = draw(st.sampled_from([0, 0, 1, 3]))
        cap_at = 40 if buy_backs else draw(st.sampled_from([0, 40]))
        options = TableOptions(turn_cap=cap, buy_backs=buy_backs, elimination_cap=cap_at)
    else:
        window = draw(st.sampled_from([3_000, 500]))
        options = TableOptions(turn_cap=min(cap, 60), claim_window_ms=window)
    return Setup(
        ruleset=name,
        kinds=tuple(kinds),
        seed=draw(st.integers(0, 2**32 - 1)),
        options=options,
        timeout_rate=draw(st.sampled_from([0.0, 0.02, 0.05])),
        claim_rate=draw(st.sampled_from([0.1, 0.3])) if name == "contract" else 0.0,
    )


def players_for(setup: Setup, rng: random.Random) -> list[Player]:
    return [RandomPlayer(rng) if k == "random" else GreedyBot() for k in setup.kinds]


def _claims(state: GameState, rng: random.Random, rate: float) -> list[int]:
    """Seats that claim the open window now, in a random order of arrival."""
    if state.claim_card < 0:
        return []
    seats = [s for s in playing(state) if may_claim(state, s)]
    rng.shuffle(seats)
    return [s for s in seats if rng.random() < rate]


def play_checked(setup: Setup) -> set[str]:
    """Play one game checking every invariant; the names of the actions and events seen."""
    rules = preset(setup.ruleset)
    rng = random.Random(setup.seed)
    checks = random.Random(setup.seed ^ 0x5EED)
    players = players_for(setup, rng)
    state = new_game(rules, len(setup.kinds), setup.options)
    cap = state.options.turn_cap
    per_round = cap * (ACTIONS_PER_TURN + len(setup.kinds)) + 1
    now = 0
    steps_this_round = 0
    seen: set[str] = set()
    for _ in range(MAX_ROUNDS[setup.ruleset] * per_round):
        if state.phase == Phase.GAME_OVER:
            break
        try_illegal(state, checks, now)
        seat: int
        action: Action | None
        queued = _claims(state, checks, setup.claim_rate)
        if state.phase == Phase.DEAL:
            seat, action = SYSTEM, deal_action(state, rng)
        elif queued:
            seat, action = queued[0], Claim(state.claim_card)
        elif state.claim_card >= 0 and checks.random() < 0.3:
            seat, action, now = SYSTEM, Timeout(), state.claim_deadline_ms  # the window ends
        else:
            seat = state.current
            timed_out = checks.random() < setup.timeout_rate
            action = None if timed_out else players[seat].move(state, seat)
            if checks.random() < 0.04:
                check_legal_actions(state, now)
        if action is None:
            seat, action, now = SYSTEM, Timeout(), state.deadline_ms
        new, events = apply(state, seat, action, now)
        seen.add(type(action).__name__)
        seen.update(type(e).__name__ for e in events)
        check_events(state, new, events)
        check_views(new)
        assert_conserved(new)
        assert new.ruleset.deck.size == deck_size(setup.ruleset, new.seats)
        if state.phase != Phase.GAME_OVER:
            check_game_end(new, events)
        steps_this_round += 1
        assert steps_this_round <= per_round
        for event in events:
            if isinstance(event, RoundEnded):
                check_round_scores(state, new, event)
                # The state keeps the round as the event told it.
                kept = new.results[-1]
                assert (kept.totals, kept.doubled) == (event.totals, event.doubled)
                if event.reason == EndReason.WENT_OUT:
                    assert new.hands[event.winner] == [] and new.turn <= cap
                elif event.reason == EndReason.BLOCKED:
                    assert rules.blocked_deal
                else:
                    assert event.reason == EndReason.TURN_CAP and new.turn == cap
                steps_this_round = 0
        state = new
    assert state.phase == Phase.GAME_OVER, "the game did not end within its bound"
    assert len(state.results) <= MAX_ROUNDS[setup.ruleset]
    assert all(b <= state.options.buy_backs for b in state.buy_backs)
    if setup.ruleset == "contract":
        assert len(state.results) == 7
    return seen


@pytest.mark.parametrize("name", ["rami51", "classic", "contract"])
def test_random_full_games_keep_every_invariant_in_every_rule_set(name: str) -> None:
    @settings(
        max_examples=max(1, round(EXAMPLES[name] * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        database=None,
        derandomize=not os.environ.get("RULES_GAMES"),
    )
    @given(setups(name))
    def run(setup: Setup) -> None:
        play_checked(setup)

    run()


def test_the_checked_games_reach_each_rule_sets_own_paths() -> None:
    """The properties only mean something if the games reach these paths."""
    seen: dict[str, set[str]] = {}
    for name, options in (
        ("rami51", TableOptions(opening_threshold=30, target_score=200)),
        ("classic", TableOptions(buy_backs=1, elimination_cap=40)),
        ("contract", TableOptions(turn_cap=60)),
    ):
        seen[name] = set()
        for seed in range(2):
            setup = Setup(name, ("greedy", "greedy", "random"), seed, options, 0.02, 0.3)
            seen[name] |= play_checked(setup)
    common = {"Melded", "LaidOff", "Discarded", "TurnPassed", "RoundEnded", "GameEnded"}
    for name in seen:
        assert common <= seen[name], (name, common - seen[name])
    assert {"Reposer", "Reposed", "TakeDiscard"} <= seen["rami51"]
    assert {"CardAnnounced", "JokerSwapped", "PlayerEliminated"} <= seen["classic"]
    assert {"Claim", "ClaimMade", "Claimed", "ClaimWindowOpened"} <= seen["contract"]


@pytest.mark.parametrize(
    ("name", "seats"), [("classic", 5), ("classic", 6), ("contract", 5), ("contract", 6)]
)
def test_tables_of_five_and_six_keep_every_invariant(name: str, seats: int) -> None:
    """Seed 002: « de 2 à 6 joueurs »; seed 004: « quatre à six », with a third pack
    and a second joker « au-delà de quatre joueurs ». The same invariants at the
    largest tables: the 158 cards conserved, one winner, the scores."""
    options = (
        TableOptions(turn_cap=60, elimination_cap=60)
        if name == "classic"
        else TableOptions(turn_cap=60)
    )
    kinds = tuple(("greedy", "random")[s % 2] for s in range(seats))
    setup = Setup(
        ruleset=name,
        kinds=kinds,
        seed=0x5EA75,  # fixed: the same deals and moves on every run
        options=options,
        timeout_rate=0.02,
        claim_rate=0.3,
    )
    seen = play_checked(setup)
    assert {"RoundEnded", "GameEnded", "Melded", "Discarded"} <= seen
