"""Bot levels (`levels`): `strong` is the greedy bot as it was, `easy` and
`normal` play its moves with a learner's mistakes, every level plays every rule
set legally, and a game of level bots replays exactly from its seed."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from services.game.rules import (
    SYSTEM,
    Action,
    Discard,
    DrawStock,
    GameState,
    LayOff,
    Meld,
    Phase,
    RuleError,
    SwapJoker,
    TakeDiscard,
    Timeout,
    apply,
    new_game,
    preset,
)
from services.game.rules.actions import Claim
from services.game.rules.bots import GreedyBot
from services.game.rules.events import Event
from services.game.rules.levels import BotLevel, LevelBot
from services.game.rules.scoring import card_penalty
from services.game.rules.simulate import deal_action, play_game

CAFE = preset("cafe")
LEVELS = (BotLevel.EASY, BotLevel.NORMAL, BotLevel.STRONG)


def _transcript(players: list[LevelBot] | list[GreedyBot], seed: int) -> list[str]:
    moves: list[str] = []

    def observe(_s: GameState, seat: int, action: Action, _n: GameState, _e: list[Event]) -> None:
        moves.append(f"{seat}:{action!r}")

    play_game(CAFE, players, random.Random(seed), observe=observe)
    return moves


def test_the_strong_level_plays_exactly_as_the_greedy_bot() -> None:
    for seed in range(8):
        greedy = _transcript([GreedyBot(), GreedyBot()], seed)
        strong = _transcript([LevelBot(BotLevel.STRONG), LevelBot(BotLevel.STRONG)], seed)
        assert strong == greedy, f"seed {seed}"


def test_a_game_of_level_bots_replays_exactly_from_its_seed() -> None:
    for seed in range(4):
        players = [LevelBot(BotLevel.EASY), LevelBot(BotLevel.NORMAL)]
        assert _transcript(players, seed) == _transcript(players, seed)


def test_easy_and_normal_do_not_play_as_the_greedy_bot() -> None:
    for level in (BotLevel.EASY, BotLevel.NORMAL):
        differ = sum(
            _transcript([LevelBot(level), LevelBot(level)], seed)
            != _transcript([GreedyBot(), GreedyBot()], seed)
            for seed in range(8)
        )
        assert differ >= 6, f"{level} played the greedy bot's game {8 - differ} times in 8"


def _mistakes(level: BotLevel, games: int) -> Counter[str]:
    """What a level bot did where the greedy bot, asked on the same state, would
    have done otherwise, over ``games`` two-seat cafe games of that level."""
    greedy = GreedyBot()
    seen: Counter[str] = Counter()

    def observe(state: GameState, seat: int, action: Action, *_after: object) -> None:
        if seat == SYSTEM:
            return
        best = greedy.move(state, seat)
        seen["moves"] += 1
        if best == action:
            return
        if isinstance(best, TakeDiscard) and isinstance(action, DrawStock):
            seen["passes_discard"] += 1
        elif isinstance(best, Meld) and isinstance(action, Discard):
            held = {c for spec in best.melds for c in spec.cards}
            seen["breaks_meld" if action.card in held else "melds_late"] += 1
        elif isinstance(best, LayOff):
            seen["misses_lay_off"] += 1
        elif isinstance(best, SwapJoker):
            seen["misses_swap"] += 1
        elif isinstance(best, Discard) and isinstance(action, Discard):
            rules = state.ruleset
            lower = card_penalty(action.card, rules) < card_penalty(best.card, rules)
            seen["keeps_high" if lower else "other"] += 1
        else:
            seen["other"] += 1

    for seed in range(games):
        play_game(CAFE, [LevelBot(level), LevelBot(level)], random.Random(seed), observe=observe)
    return seen


def test_the_levels_differ_in_the_mistakes_they_make() -> None:
    """Per move played, easy passes up more useful discards, lays its melds later,
    misses more lay-offs and keeps more high cards than normal; strong none."""
    rates = {}
    for level in LEVELS:
        seen = _mistakes(level, 30)
        rates[level] = {k: v / seen["moves"] for k, v in seen.items() if k != "moves"}
    assert not rates[BotLevel.STRONG], rates[BotLevel.STRONG]
    easy, normal = rates[BotLevel.EASY], rates[BotLevel.NORMAL]
    assert not easy.get("other") and not normal.get("other")
    for kind in ("passes_discard", "melds_late", "misses_lay_off", "keeps_high", "breaks_meld"):
        assert easy.get(kind, 0) > normal.get(kind, 0) > 0, (kind, easy, normal)


def test_an_easy_bot_does_not_claim_every_discard_it_wants() -> None:
    """`contract` "Puis-je ?": the greedy bot claims whenever the card helps; easy
    lets most of those chances go, strong none."""
    wanted = claimed_easy = claimed_strong = 0
    greedy, easy, strong = GreedyBot(), LevelBot(BotLevel.EASY), LevelBot(BotLevel.STRONG)
    contract = preset("contract")
    for seed in range(3):
        rng = random.Random(seed)
        state, now = new_game(contract, 3), 0
        while state.phase != Phase.GAME_OVER and state.round_no <= 2:
            if state.phase == Phase.DEAL:
                state, _ = apply(state, SYSTEM, deal_action(state, rng), now)
                continue
            for seat in state.playing():
                if state.claim_card >= 0 and greedy.claims(state, seat):
                    wanted += 1
                    claimed_easy += easy.claims(state, seat)
                    claimed_strong += strong.claims(state, seat)
            action = greedy.move(state, state.current)
            seat = state.current
            if action is None:
                seat, action, now = SYSTEM, Timeout(), state.deadline_ms
            state, _ = apply(state, seat, action, now)
    assert wanted >= 10
    assert claimed_strong == wanted
    assert claimed_easy < wanted / 2


@pytest.mark.parametrize("name", ["cafe", "rami51", "classic", "contract"])
def test_every_level_plays_every_rule_set_legally_and_every_game_ends(name: str) -> None:
    """Three seats, one bot of each level: every action they return is accepted,
    the bots claim in `contract`, and the game ends."""
    for seed in range(2):
        rng = random.Random(seed)
        bots = [LevelBot(level) for level in random.Random(seed).sample(LEVELS, 3)]
        state, now = new_game(preset(name), 3), 0
        for _ in range(100_000):
            if state.phase == Phase.GAME_OVER:
                break
            seat: int
            action: Action | None
            claimer = next(
                (s for s in state.playing() if state.claim_card >= 0 and bots[s].claims(state, s)),
                None,
            )
            if state.phase == Phase.DEAL:
                seat, action = SYSTEM, deal_action(state, rng)
            elif claimer is not None:
                seat, action = claimer, Claim(state.claim_card)
            else:
                seat = state.current
                action = bots[seat].move(state, seat)
                assert action is not None, f"{name} seed {seed}: {bots[seat].level} has no move"
            try:
                state, _ = apply(state, seat, action, now)
            except RuleError as error:
                pytest.fail(f"{name} seed {seed}: {action} was refused: {error!r}")
        assert state.phase == Phase.GAME_OVER, f"{name} seed {seed}: the game did not end"
