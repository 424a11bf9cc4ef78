"""`rami51`, going out and scoring: RULES.md §3, one test per row and decision on
going out, penalties and scoring, the stock exhausted and blocked deals, and game
length; with seed 001's worked examples (K+7, A+JK+3, 4+4+Q = 69, doubled 138;
blocked hands 25, 17, 24 -> 15)."""

from __future__ import annotations

import pytest

from services.game.rules import (
    SYSTEM,
    Deal,
    DrawStock,
    Phase,
    Ruleset,
    TableOptions,
    apply,
    hand_penalty,
    new_game,
    parse_cards,
    preset,
)
from services.game.rules.events import (
    Drew,
    EndReason,
    GameEnded,
    Reshuffled,
    RoundDealt,
    RoundEnded,
)
from services.game.rules.ruleset import effective_options, with_changes
from services.game.rules.scoring import card_penalty

from .helpers import Table, assert_conserved, sorted_codes
from .test_rami51 import CAFE, LONER, LONER_PENALTY, RAMI, RAMI51, ended, rami51

# --- going out ------------------------------------------------------------------------


def opened_with_a_club_run_left(stock: str) -> Table:
    """Seat 0 opens in turn 1 keeping 5C 6C 7C; in turn 2 it has drawn the
    first card of ``stock``."""
    table = rami51([RAMI, LONER], stock="KH 3S " + stock)
    table.draw(0)
    table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D")
    table.discard(0, "KH")
    table.draw_and_throw(1)
    table.draw(0)
    return table


def test_rami51_going_out_by_discarding_the_last_card() -> None:
    table = opened_with_a_club_run_left("9D")
    table.meld(0, "5C 6C 7C")
    table.discard(0, "9D")
    assert table.kinds()[:2] == ["Discarded", "RoundEnded"] and table.kinds()[-1] == "GameEnded"
    assert ended(table).winner == 0 and ended(table).reason == EndReason.WENT_OUT


def test_rami51_going_out_by_melding_the_last_card_no_discard_needed() -> None:
    table = opened_with_a_club_run_left("8C")
    table.meld(0, "5C 6C 7C 8C")
    assert table.kinds()[:2] == ["Melded", "RoundEnded"] and table.kinds()[-1] == "GameEnded"
    assert ended(table).winner == 0 and table.state.hands[0] == []
    assert table.state.phase == Phase.GAME_OVER


def test_rami51_going_out_by_laying_off_the_last_card() -> None:
    table = opened_with_a_club_run_left("JS")
    table.meld(0, "5C 6C 7C")
    table.lay_off(0, 1, "JS")
    assert table.kinds()[:2] == ["LaidOff", "RoundEnded"] and table.kinds()[-1] == "GameEnded"
    assert ended(table).winner == 0 and table.state.hands[0] == []


# --- penalties and scoring ------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "points"),
    [
        ("2S", 2),
        ("7H", 7),
        ("TD", 10),
        ("JC", 10),
        ("QS", 10),
        ("KH", 10),
        ("AD", 11),
        ("JK", 20),
    ],
)
def test_rami51_penalties_face_value_faces_10_ace_11_joker_20(code: str, points: int) -> None:
    for card in RAMI51.deck.ids_of(code):
        assert card_penalty(card, RAMI51) == points


SEED_HANDS = [
    RAMI,
    "JD JH JC 2S 3S 4S 5S 6H 7H 8H 9H KH 7D",
    "KS KD KC 8C 9C TC JC QS QH QD AS JK 3C",
    "6D 7D 8D 9D 5H 5S 5C TS TH TC 4H 4D QC",
]
"""Seats 1-3 each open in their first turn and keep K+7, A+JK+3 and 4+4+Q."""
SEED_MELDS = [
    ["JD JH JC", "2S 3S 4S 5S", "6H 7H 8H 9H"],
    ["KS KD KC", "8C 9C TC JC", "QS QH QD"],
    ["6D 7D 8D 9D", "5H 5S 5C", "TS TH TC"],
]


def play_seed_deal(winner_opens_first: bool) -> Table:
    table = rami51(SEED_HANDS, discard="2H", stock="3S 9S 6S 8D 2C")
    if winner_opens_first:
        table.draw(0)
        table.meld(0, "7S 8S 9S TS", "QD QH QC")
        table.discard(0, "3S")
    else:
        table.draw_and_throw(0)
    for seat, melds in enumerate(SEED_MELDS, start=1):
        table.draw(seat)
        drawn = table.events[0]
        assert isinstance(drawn, Drew)
        table.meld(seat, *melds)
        table.act(seat, table.discard_action(seat, table.deck.code(drawn.card)))
    assert [table.hand(s) for s in (1, 2, 3)] == ["KH 7D", "AS 3C JK", "4H 4D QC"]
    assert [hand_penalty(table.state.hands[s], RAMI51) for s in (1, 2, 3)] == [17, 34, 18]
    table.draw(0)
    drawn = table.events[0]
    assert isinstance(drawn, Drew)
    if winner_opens_first:
        table.meld(0, "2D 3D 4D", "5C 6C 7C")
    else:
        table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C")
    table.act(0, table.discard_action(0, table.deck.code(drawn.card)))
    return table


def test_rami51_seed_example_winner_scores_17_plus_34_plus_18_is_69() -> None:
    table = play_seed_deal(winner_opens_first=True)
    result = ended(table)
    assert result.winner == 0 and result.reason == EndReason.WENT_OUT
    # Only the cards in hand count: the opponents' melds are not deducted.
    assert result.penalties == (69, 0, 0, 0)
    assert table.state.totals == [69, 0, 0, 0]


def test_rami51_seed_example_rami_d_un_coup_doubles_69_to_138() -> None:
    # Seat 0 opens and empties its hand in one turn begun without having opened.
    table = play_seed_deal(winner_opens_first=False)
    assert ended(table).penalties == (138, 0, 0, 0)


def test_rami51_scoring_nothing_extra_for_an_opponent_who_never_opened() -> None:
    table = opened_with_a_club_run_left("9D")
    assert not table.state.opened[1]
    table.meld(0, "5C 6C 7C")
    table.discard(0, "9D")
    # Opened in an earlier turn: not doubled; the loner pays its hand, no more.
    assert ended(table).penalties == (LONER_PENALTY, 0)


# --- stock exhausted and blocked deals ------------------------------------------------


BLOCK_MELDS = [
    ["AH 2H 3H JK", "TD JD QD", "JK 7C 8C"],
    ["JK 8H 9H", "4C 5C 6C JK", "2D 3D 4D 5D"],
    ["9S 9D 9C", "JH JD JC", "2C 3C 4C 5C"],
]
"""Openings that lay all four jokers, so the stock holds none and every seat can
throw each card it draws."""


NO_RESHUFFLE = with_changes(RAMI51, max_reshuffles=0)
"""`rami51` whose first exhaustion blocks the deal, scored as `rami51` scores a
blocked deal. Its stock is drawn in the dealt order, so the card that empties it
is known: the deck's last natural card, the second KC (the openings of
`BLOCK_MELDS` lay the four jokers), which seat 1 draws."""


def blocked_deal(kept: list[str], ruleset: Ruleset = RAMI51) -> Table:
    """Each seat opens keeping ``kept[seat]``, then everyone draws and throws the
    card it drew until the deal blocks."""
    hands = [" ".join([*melds, keep]) for melds, keep in zip(BLOCK_MELDS, kept, strict=True)]
    table = Table(hands, "5S", ruleset=ruleset, options=TableOptions(turn_cap=1000))
    for seat, melds in enumerate(BLOCK_MELDS):
        table.draw(seat)
        drawn = table.events[0]
        assert isinstance(drawn, Drew)
        table.meld(seat, *melds)
        table.act(seat, table.discard_action(seat, table.deck.code(drawn.card)))
    assert [table.hand(s) for s in range(3)] == [
        sorted_codes(parse_cards(k, RAMI51), RAMI51) for k in kept
    ]
    while table.state.phase != Phase.GAME_OVER:
        table.draw_and_throw(table.state.current)
        assert_conserved(table.state)
    return table


def last_drawer(table: Table) -> int:
    """The seat whose draw emptied the stock and blocked the deal."""
    drew = table.events[0]
    assert isinstance(drew, Drew) and drew.stock_size == 0
    return drew.seat


def test_rami51_stock_exhausted_reshuffled_at_most_twice_then_the_deal_blocks() -> None:
    table = blocked_deal(["KS 9H 6D", "TH 7S", "KH 8S 6H"])
    reshuffles = [e for e in table.log if isinstance(e, Reshuffled)]
    assert len(reshuffles) == 2 and table.state.reshuffles == 2
    for event in reshuffles:
        assert event.discard_top >= 0, "the top card stays on the discard pile"
    assert ended(table).reason == EndReason.BLOCKED


def test_rami51_seed_the_deal_blocks_the_moment_the_stock_runs_out_a_third_time() -> None:
    """Seed 001: « Si la pioche s'épuise une troisième fois, ou si la défausse compte
    moins de deux cartes, la donne est bloquée. » The draw that empties the stock
    after the second reshuffle ends the deal at once (RULES.md decision): nobody
    plays on by taking discards, and nobody goes out for a full win instead."""
    table = blocked_deal(["KS 9H 6D", "TH 7S", "KH 8S 6H"])
    assert table.kinds()[:2] == ["Drew", "RoundEnded"]
    seat = last_drawer(table)
    assert table.state.stock == [] and table.state.reshuffles == 2
    # The drawn card counts in the drawer's hand: the deal was blocked before it moved.
    assert table.events[0].card in table.state.hands[seat]  # type: ignore[attr-defined]
    result = ended(table)
    hands = [hand_penalty(h, RAMI51) for h in table.state.hands]
    light = min(hands)
    assert result.winner == hands.index(light)
    assert result.penalties[result.winner] == sum(h - light for h in hands)


def test_rami51_seed_example_blocked_hands_25_17_24_the_17_wins_and_scores_15() -> None:
    # Seat 1 draws the stock's last card, the second KC: 4S 3H KC make its 17.
    table = blocked_deal(["KS 9H 6D", "4S 3H", "KH 8S 6H"], NO_RESHUFFLE)
    assert last_drawer(table) == 1 and table.hand(1) == "4S 3H KC"
    assert [hand_penalty(h, RAMI51) for h in table.state.hands] == [25, 17, 24]
    result = ended(table)
    assert result.winner == 1 and result.penalties == (0, 15, 0)
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.winner == 1


def test_rami51_blocked_deal_ties_go_to_the_lowest_seat() -> None:
    table = blocked_deal(["9H 6D 2S", "4S 3H", "KH 8S 6H"], NO_RESHUFFLE)
    assert [hand_penalty(h, RAMI51) for h in table.state.hands] == [17, 17, 24]
    result = ended(table)
    assert result.winner == 0 and result.penalties == (7, 0, 0)


def test_rami51_blocked_when_a_reshuffle_finds_fewer_than_two_discards_never_doubled() -> None:
    # A 107-card variant dealt 53 each leaves no stock at all and one turned card:
    # the first draw needs a reshuffle that a one-card pile cannot give.
    variant = with_changes(RAMI51, jokers=3, hand_size=53)
    state = new_game(variant, 2)
    state, _ = apply(state, SYSTEM, Deal(tuple(variant.deck.ids()), 0), 0)
    assert state.stock == [] and len(state.discard) == 1
    state, events = apply(state, 0, DrawStock(), 0)
    result = next(e for e in events if isinstance(e, RoundEnded))
    assert result.reason == EndReason.BLOCKED
    light, heavy = sorted(hand_penalty(h, variant) for h in state.hands)
    # Nobody had opened, yet a blocked deal pays the bare difference.
    assert max(result.penalties) == heavy - light and min(result.penalties) == 0


# --- game length ----------------------------------------------------------------------


def go_out_at_once(table: Table, seat: int) -> None:
    """``seat`` holds RAMI and draws a card that it throws after laying the rest."""
    table.draw(seat)
    drawn = table.events[0]
    assert isinstance(drawn, Drew)
    table.meld(seat, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C")
    table.act(seat, table.discard_action(seat, table.deck.code(drawn.card)))


def test_rami51_game_length_default_one_deal_its_winner_wins() -> None:
    table = rami51([RAMI, LONER], stock="KS")
    assert table.state.options.rounds == 1 and table.state.options.target_score == 0
    go_out_at_once(table, 0)
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.winner == 0
    assert game.reason == EndReason.ROUNDS_PLAYED and game.totals == (188, 0)


def test_rami51_game_length_to_200_only_the_deal_winner_scores_dealer_moves() -> None:
    table = rami51([RAMI, LONER], stock="KS", target_score=200)
    go_out_at_once(table, 0)  # 2 x 94 = 188: not yet 200
    assert table.state.phase == Phase.DEAL and table.state.totals == [188, 0]
    table.deal([LONER, RAMI], "KD", "KS")
    dealt = table.events[0]
    assert isinstance(dealt, RoundDealt) and dealt.dealer == 0 and table.state.current == 1
    go_out_at_once(table, 1)
    # Seat 0 lost this deal: it adds nothing, its 94 points go to seat 1.
    assert table.state.phase == Phase.DEAL and table.state.totals == [188, 188]
    table.deal([RAMI, LONER], "KD", "KS")
    dealt = table.events[0]
    assert isinstance(dealt, RoundDealt) and dealt.dealer == 1 and table.state.current == 0
    go_out_at_once(table, 0)
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.reason == EndReason.TARGET_REACHED
    assert game.totals == (376, 188) and game.winner == 0, "the highest total wins"
    assert len(table.state.results) == 3


def test_rami51_to_200_is_a_rami51_option_only() -> None:
    assert effective_options(RAMI51, TableOptions(target_score=200)).target_score == 200
    for name in ("cafe", "classic", "contract"):
        with pytest.raises(ValueError, match="target score"):
            effective_options(preset(name), TableOptions(target_score=200))


def test_rami51_game_length_is_one_deal_or_to_200_never_an_elimination_cap() -> None:
    # The winner collects: a cap would put the leading player out of the game.
    for name in ("rami51", "contract"):
        with pytest.raises(ValueError, match="elimination cap"):
            effective_options(preset(name), TableOptions(elimination_cap=100))
    assert effective_options(CAFE, TableOptions(elimination_cap=500)).elimination_cap == 500
