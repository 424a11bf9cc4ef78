"""The bots play all four rule sets legally. Over a fixed series of seeds, seat
counts and table options, every action `GreedyBot` and `RandomPlayer` return is
accepted by the engine (never a `RuleError`), the greedy bot always has a move
while it holds the turn (it is never left waiting for the clock), and every game
ends. In `contract` the other seats also claim the discard ("Puis-je ?"): the
greedy bot when it wants the card, the random player at random, so the bots
play hands that claims made longer."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from services.game.rules import (
    SYSTEM,
    Action,
    GameState,
    Meld,
    Phase,
    RuleError,
    TableOptions,
    Timeout,
    apply,
    legal_actions,
    new_game,
    preset,
)
from services.game.rules.actions import Claim
from services.game.rules.bots import GreedyBot, RandomPlayer
from services.game.rules.claims import may_claim
from services.game.rules.events import EndReason, RoundEnded
from services.game.rules.legal import discardable
from services.game.rules.simulate import Player, deal_action

from .test_contract import HEARTS, at_deal

MAX_STEPS = 200_000
"""Far above the longest game of the series; a game past it counts as stuck."""

SEATS_AND_PLAYERS = [
    ("greedy", "greedy"),
    ("greedy", "random", "greedy"),
    ("random", "greedy", "random", "greedy"),
    ("greedy", "greedy", "greedy"),
    ("random", "random"),
    ("greedy", "greedy", "greedy", "greedy"),
]


def options_for(name: str, seed: int) -> TableOptions:
    if name == "rami51":
        threshold = (30, 40, 51)[seed % 3]
        return TableOptions(opening_threshold=threshold, target_score=200 if seed % 2 else 0)
    if name == "classic":
        return TableOptions(buy_backs=seed % 2)
    if name == "cafe":
        return TableOptions(rounds=2)
    return TableOptions()


def play_series_game(name: str, seed: int) -> Counter[str]:
    """One game of the series; counts of how the rounds ended and who moved."""
    kinds = SEATS_AND_PLAYERS[seed % len(SEATS_AND_PLAYERS)]
    rng = random.Random(seed)
    claims = random.Random(seed + 1)
    players: list[Player] = [GreedyBot() if k == "greedy" else RandomPlayer(rng) for k in kinds]
    state = new_game(preset(name), len(kinds), options_for(name, seed))
    now = 0
    seen: Counter[str] = Counter()
    for _ in range(MAX_STEPS):
        if state.phase == Phase.GAME_OVER:
            break
        seat: int
        action: Action | None
        if state.phase == Phase.DEAL:
            seat, action = SYSTEM, deal_action(state, rng)
        elif state.claim_card >= 0 and (claimer := _claimer(state, claims, players)) is not None:
            seat, action = claimer, Claim(state.claim_card)
            seen[f"{kinds[seat]}:Claim"] += 1
        else:
            seat = state.current
            action = players[seat].move(state, seat)
            if action is None:
                _check_may_wait(state, seat, kinds[seat])
                seen["waited"] += 1
                seat, action, now = SYSTEM, Timeout(), state.deadline_ms
            else:
                seen[f"{kinds[seat]}:{type(action).__name__}"] += 1
        try:
            state, events = apply(state, seat, action, now)
        except RuleError as error:
            kind = kinds[seat] if seat >= 0 else "table"
            pytest.fail(f"{name} seed {seed}: the {kind} player's {action} was refused: {error!r}")
        for event in events:
            if isinstance(event, RoundEnded):
                seen[event.reason.value] += 1
                if event.reason == EndReason.WENT_OUT:
                    seen[f"out:{kinds[event.winner]}"] += 1
    assert state.phase == Phase.GAME_OVER, f"{name} seed {seed}: the game did not end"
    return seen


def _claimer(state: GameState, rng: random.Random, players: list[Player]) -> int | None:
    """A greedy seat that wants the discard claims it; now and then a random one does."""
    waiting = [s for s in state.playing() if may_claim(state, s)]
    for seat in waiting:
        player = players[seat]
        if isinstance(player, GreedyBot) and player.claims(state, seat):
            return seat
    randoms = [s for s in waiting if isinstance(players[s], RandomPlayer)]
    if randoms and rng.random() < 0.15:
        return rng.choice(randoms)
    return None


def _check_may_wait(state: GameState, seat: int, kind: str) -> None:
    """Only the random player may be left with nothing to do, and only when no card
    may be discarded: it took a card it cannot use (`classic`, `rami51` before
    opening; the clock puts it back), or it holds only jokers besides the card it
    took (`cafe`, `rami51`, `contract`; the clock passes the turn)."""
    assert kind == "random", f"the greedy bot has no move: {state.phase.name}, seat {seat}"
    assert state.phase == Phase.PLAY and not discardable(state, state.hands[seat])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", ["cafe", "rami51", "classic", "contract"])
def test_bots_play_every_rule_set_legally_and_every_game_ends(name: str, seed: int) -> None:
    seen = play_series_game(name, seed)
    assert seen["greedy:Discard"] + seen["random:Discard"] > 0


@pytest.mark.parametrize("name", ["cafe", "rami51", "classic", "contract"])
def test_bots_go_out_in_every_rule_set_over_the_series(name: str) -> None:
    """Legal is not enough: over the series the greedy bot lays melds and wins deals."""
    seen: Counter[str] = Counter()
    for seed in range(3):
        seen += play_series_game(name, seed)
    assert seen["greedy:Meld"] > 0 and seen["out:greedy"] > 0
    if name == "contract":
        assert seen["greedy:Claim"] > 0, "the greedy bot never claimed a discard"


def test_bots_keep_a_card_for_the_discard_when_a_contract_could_take_every_card() -> None:
    """Deal 3 (two runs of 4) with two runs that hold all eleven cards after the draw:
    before deal 7 a discard closes every turn, so a contract plan keeps one card."""
    table = at_deal(3, ["AS 2S 3S 4S 5S 6H 7H 8H 9H TH", HEARTS], stock="JH")
    table.draw(0)
    melds = [a for a in legal_actions(table.state, 0) if isinstance(a, Meld)]
    assert melds, "the contract is there to lay"
    for meld in melds:
        assert sum(len(m.cards) for m in meld.melds) < len(table.state.hands[0])
        apply(table.state, 0, meld, table.now)
    action = GreedyBot().move(table.state, 0)
    assert isinstance(action, Meld)
    table.act(0, action)
    assert table.state.opened[0] and len(table.state.hands[0]) == 1


def test_bots_see_a_contract_run_whose_joker_goes_below_to_stay_apart() -> None:
    """Deal 3 (two runs of 4): JK 3H 4H 5H and 7H 8H 9H TH. With the joker above
    (3H 4H 5H JK, the 6H) the two runs would join into one; below, they do not."""
    table = at_deal(3, ["3H 4H 5H JK 7H 8H 9H TH KC 2D", HEARTS], stock="QC")
    table.draw(0)
    melds = [a for a in legal_actions(table.state, 0) if isinstance(a, Meld)]
    assert melds, "the contract is there to lay"
    action = GreedyBot().move(table.state, 0)
    assert isinstance(action, Meld)
    table.act(0, action)
    assert table.state.opened[0]
