"""`classic`, taking the discard (RULES.md §4: "only if the card is used in the same
turn, in a meld or a lay-off"): the take is refused exactly when no move the
engine would accept this turn can use the card, since a seat holding a card it
cannot use has no legal move left (no discard, no Reposer in `classic`).

A card is usable in an opening of 51 made this turn (before opening), or after
opening: in a meld with cards of the hand, in a lay-off (alone, or with cards
of the hand that bridge the gap to a run's end), in a joker's place on the
table, or with a joker another card of the hand takes back first. The property
test checks, over random games, that every take allowed comes with a way to use
the card that the engine accepts, and that no refused take could have been used
by any move `legal_actions` lists."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.game.rules import (
    SYSTEM,
    LayOff,
    Meld,
    Phase,
    Reason,
    Side,
    SwapJoker,
    TableOptions,
    TakeDiscard,
    Timeout,
    apply,
    legal_actions,
    new_game,
)
from services.game.rules.bots import GreedyBot, RandomPlayer
from services.game.rules.events import JokerSwapped
from services.game.rules.simulate import Player, deal_action
from services.game.rules.state import GameState
from services.game.rules.taking import can_take, discard_use

from .helpers import Table
from .test_classic import CLASSIC, LONER, LONER_B, classic


def opened(hand: str, melds: tuple[str, ...], card: str) -> Table:
    """Seat 0 opens with ``melds`` and throws the AC it drew; seat 1 draws ``card``
    and throws it: seat 0 may take it now."""
    table = classic([hand, LONER_B], discard="8H", stock=f"AC {card}")
    table.draw(0)
    table.meld(0, *melds)
    table.discard(0, "AC")
    table.draw(1)
    table.discard(1, card)
    assert table.top() == card and table.state.current == 0
    return table


def refused(table: Table) -> None:
    assert table.refuse(0, TakeDiscard()).reason == Reason.DISCARD_UNUSABLE
    assert TakeDiscard() not in legal_actions(table.state, 0)


CARRE_AND_KINGS = "7S 7H 7D 7C KS KH KD 2C 4D 9H JC 3H QD TC"


# --- refused: the card cannot be used --------------------------------------------------


def test_classic_taking_a_card_of_a_full_carres_rank_is_refused() -> None:
    """7S 7H 7D 7C is full: the other 7S fits it no more than any meld of the hand."""
    refused(opened(CARRE_AND_KINGS, ("7S 7H 7D 7C", "KS KH KD"), "7S"))


def test_classic_taking_is_refused_though_a_table_meld_holds_a_joker() -> None:
    """KS KH JK gives its joker up only for the KD and the KC together: a 2S frees nothing."""
    hand = "7S 7H 7D 7C KS KH JK 2C 4D 9H JC 3H QD TC"
    refused(opened(hand, ("7S 7H 7D 7C", "KS KH JK"), "2S"))


def test_classic_taking_a_card_of_a_runs_suit_far_from_its_ends_is_refused() -> None:
    """The 3S is a spade, but 7S 8S 9S TS would need the 4S, 5S and 6S first."""
    hand = "7S 8S 9S TS KH KD KC 2C 4D 9H JC 3H QD 5C"
    refused(opened(hand, ("7S 8S 9S TS", "KH KD KC"), "3S"))


def test_classic_taking_a_joker_that_no_meld_can_hold_is_refused() -> None:
    """At most one joker a meld: KS KH JK has its joker, the carré is full, and no
    two cards of the hand make a meld with a joker."""
    hand = "7S 7H 7D 7C KS KH JK 3H 9H 5D QD 2C 6C JS"
    refused(opened(hand, ("7S 7H 7D 7C", "KS KH JK"), "JK"))


def test_classic_taking_before_opening_needs_an_opening_of_51_that_holds_the_card() -> None:
    """With the 5D, 4D 5D 6D (15) and QH KH AH with the joker as the QH (31) count
    46: no opening of 51 holds the 5D, though the joker's 20 penalty points count
    the melds' cards at 56."""
    table = classic(["KS KH JK 4D 6D 2C 9S 3H 7C QS AH 9D TC 5S", LONER], discard="5D")
    refused(table)


# --- allowed: one way to use the card, through the engine -------------------------------


def test_classic_taking_a_joker_that_a_meld_without_one_takes() -> None:
    table = opened("7S 8S 9S TS KH KD KC 2C 4D 9H JC 3H QD 5C", ("7S 8S 9S TS", "KH KD KC"), "JK")
    table.take(0)
    table.lay_off(0, 1, "JK", Side.HIGH)
    assert table.meld_codes(1) == "7S 8S 9S TS JK"


def test_classic_taking_a_card_that_takes_a_jokers_place_in_a_run() -> None:
    """7S JK 9S: the 8S goes in, the joker comes back to the hand and may stay there."""
    table = opened("7S JK 9S KS KH KD 2C 4D 9H JC 3H QD TC 5H", ("7S JK 9S", "KS KH KD"), "8S")
    table.take(0)
    joker = table.joker_of(1)
    table.act(0, SwapJoker(1, joker, table.state.taken_discard))
    assert table.meld_codes(1) == "7S 8S 9S" and joker in table.state.hands[0]
    table.discard(0, "QD")
    assert table.state.current == 1


@pytest.mark.parametrize(
    ("hand", "melds", "card"),
    [
        # The 8S takes the joker's place; the joker stays in hand.
        ("7S JK 9S KS KH KD KC 2C 4D 9H 3H QD TC 5H", ("7S JK 9S", "KS KH KD KC"), "8S"),
        # The JS goes on with the hand's joker standing for the TS.
        ("7S 8S 9S KH KD KC JK 2C 4D 9H 3H QD TC 5C", ("7S 8S 9S", "KH KD KC"), "JS"),
        # The JH frees a joker that goes down with the 9C and the 9D taken.
        ("TH JK QH KS KH KD JH 9C 2C 4D 3H QD TC 5S", ("TH JK QH", "KS KH KD"), "9D"),
    ],
)
def test_classic_a_take_allowed_is_a_move_offered_and_the_bot_plays_it_out(
    hand: str, melds: tuple[str, ...], card: str
) -> None:
    """Every way `discard_use` allows a take, the moves offered (`legal_actions`)
    and the greedy bot follow too: nobody is left with no move until the clock."""
    table = opened(hand, melds, card)
    table.take(0)
    assert legal_actions(table.state, 0), "a move that uses the card is offered"
    bot = GreedyBot()
    for _ in range(4):
        if table.state.current != 0:
            break
        action = bot.move(table.state, 0)
        assert action is not None, "the bot has a move"
        table.act(0, action)
    assert table.state.current == 1, "the turn ended with a discard"
    assert table.state.taken_discard < 0 or table.state.taken_used


def test_classic_taking_a_card_laid_off_beyond_a_joker_of_the_hand() -> None:
    """The JS goes onto 7S 8S 9S with the hand's joker standing for the TS."""
    table = opened("7S 8S 9S KH KD KC JK 2C 4D 9H 3H QD TC 5C", ("7S 8S 9S", "KH KD KC"), "JS")
    table.take(0)
    table.act(0, LayOff(1, table.cards(0, "JK JS")))
    assert table.meld_codes(1) == "7S 8S 9S JK JS"


def test_classic_taking_a_card_melded_with_a_joker_the_hand_takes_back_first() -> None:
    """The JH frees the joker of TH JK QH; the joker stays in hand and goes down with
    the 9C and the 9D taken."""
    table = opened("TH JK QH KS KH KD JH 9C 2C 4D 3H QD TC 5S", ("TH JK QH", "KS KH KD"), "9D")
    table.take(0)
    joker = table.joker_of(1)
    table.act(0, SwapJoker(1, joker, table.card(0, "JH")))
    assert any(isinstance(e, JokerSwapped) for e in table.events)
    table.meld(0, "9C 9D JK")
    table.discard(0, "QD")
    assert table.state.current == 1


# --- over random games --------------------------------------------------------------------


def _key(state: GameState, card: int) -> tuple[int, int]:
    deck = state.ruleset.deck
    return deck.rank[card], deck.suit[card]


def _check_take(state: GameState) -> None:
    """At a draw: an allowed take comes with a use the engine accepts; a refused one
    leaves no move in `legal_actions` that holds the card (or its twin), but for a
    swap before the opening."""
    seat = state.current
    if can_take(state, seat):
        use = discard_use(state, seat)
        assert use is not None
        after, _ = apply(state, seat, TakeDiscard(), 0)
        for action in use:
            after, _ = apply(after, seat, action, 0)
        assert after.taken_used, use
        return
    if not state.discard or state.reposed:
        return
    taken = state.copy()  # the take the engine refused, made anyway
    card = taken.discard.pop()
    taken.hands[seat].append(card)
    taken.taken_discard = taken.drawn = card
    taken.phase = Phase.PLAY
    key = _key(state, card)
    for action in legal_actions(taken, seat):
        if isinstance(action, Meld):
            cards = [c for spec in action.melds for c in spec.cards]
        elif isinstance(action, LayOff):
            cards = list(action.cards)
        elif isinstance(action, SwapJoker) and state.opened[seat]:
            # Before the opening the taken card never goes in a joker's place (it
            # goes into the opening), though its twin from the hand may.
            cards = [action.replacement, action.second]
        else:
            continue
        assert key not in {_key(state, c) for c in cards if c >= 0}, action


def _play(seed: int) -> int:
    """A game of three seats checked at every draw; the number of draws checked."""
    rng = random.Random(seed)
    players: list[Player] = [GreedyBot(), RandomPlayer(rng), GreedyBot()]
    state = new_game(CLASSIC, 3, TableOptions())
    checked = 0
    for _ in range(20_000):
        if state.phase == Phase.GAME_OVER:
            break
        if state.phase == Phase.DEAL:
            state, _ = apply(state, SYSTEM, deal_action(state, rng), 0)
            continue
        if state.phase == Phase.DRAW:
            _check_take(state)
            checked += 1
        action = players[state.current].move(state, state.current)
        if action is None:
            state, _ = apply(state, SYSTEM, Timeout(), state.deadline_ms)
        else:
            state, _ = apply(state, state.current, action, 0)
    assert state.phase == Phase.GAME_OVER
    return checked


@settings(
    max_examples=6,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32 - 1))
def test_classic_every_take_allowed_has_a_use_the_engine_accepts(seed: int) -> None:
    assert _play(seed) > 0
