"""The melds a seat lays to open (`plans.melds_to_lay`, the hints and the bots on
top of it): where the finder's melds (least penalty left) miss the opening
threshold or leave out a discard taken this turn, another set of melds may
still do it (`opening_finder.find_opening`). A joker costs the same penalty anywhere
but counts as the card it stands for; an ace low in a run counts 1."""

from __future__ import annotations

import contextlib
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from services.game.rules import Meld, MeldSpec, RuleError, preset
from services.game.rules.bots import GreedyBot
from services.game.rules.finder import find_melds
from services.game.rules.hints import hint
from services.game.rules.melds import MeldKind, check_meld
from services.game.rules.opening_finder import find_opening
from services.game.rules.plans import melds_to_lay
from services.game.rules.ruleset import Ruleset
from services.game.rules.scoring import meld_points

from .helpers import Table, sorted_codes
from .test_classic import LONER_B, classic

RAMI51 = preset("rami51")

JOKER_IN_A_RUN = "4S 6H 7H 8H KH 3D 4D 9D 6C AS TS 4H 2C"
"""With a joker drawn: 4S 4H 4D JK and 6H 7H 8H lay the most penalty but count
16 + 21 = 37; 6H 7H 8H JK (30) and 4S 4H 4D (12) count 42 and open at 40."""
OTHERS = "2H 5S 8S QS 3C 9C JC KD 7S 9S 3H QD 5D"


def joker_table() -> Table:
    table = Table([JOKER_IN_A_RUN, OTHERS], discard="KC", stock="JK", ruleset=RAMI51)
    table.draw(0)
    return table


def test_opening_rami51_the_least_penalty_melds_count_37_and_miss_40() -> None:
    table = joker_table()
    found = find_melds(table.state.hands[0], RAMI51)
    assert sum(meld_points(m, RAMI51) for m in found.melds) == 37


def test_hint_rami51_puts_the_joker_in_the_run_where_it_opens() -> None:
    table = joker_table()
    got = hint(table.state, 0)
    assert got.opens, got.refusal
    assert sorted(sorted_codes(m.cards, RAMI51) for m in got.melds) == [
        "4S 4H 4D",
        "6H 7H 8H JK",
    ]
    assert sum(meld_points(m, RAMI51) for m in got.melds) == 42
    table.act(0, Meld(tuple(MeldSpec(m.cards) for m in got.melds)))
    assert table.state.opened[0]


def test_melds_to_lay_rami51_opens_where_the_finder_melds_do_not() -> None:
    table = joker_table()
    melds = melds_to_lay(table.state, 0, table.state.hands[0])
    assert sum(meld_points(m, RAMI51) for m in melds) >= 40


def test_greedy_bot_rami51_lays_the_opening_instead_of_discarding() -> None:
    table = joker_table()
    action = GreedyBot().move(table.state, 0)
    assert isinstance(action, Meld), action
    table.act(0, action)
    assert table.state.opened[0]


def test_hint_before_the_draw_opens_with_points_not_with_the_exemption() -> None:
    """Seat 1, before its draw, lays 12 of its 13 cards the lightest way (AS JK 3S,
    AD-5D, 3S JK 5S 6S: 39 points); the drawn card will leave two, so no exemption:
    AS AD JK, 2D-5D and 3S JK 5S 6S count 65 and open."""
    hands = ["2H 8S QS 3C 9C JC KD 7S 9S 3H QD 7D KH", "3S 5S 6S 2D 3D 5D AS 3S 5S AD 4D JK JK"]
    table = Table(hands, discard="KC", stock="KS 9H", ruleset=RAMI51)
    got = hint(table.state, 1)
    assert got.opens, got.refusal
    table.draw(0)
    table.discard(0, "KS")
    table.draw(1)
    table.act(1, Meld(tuple(MeldSpec(m.cards) for m in got.melds)))
    assert table.state.opened[1] and len(table.state.hands[1]) == 3


def test_greedy_bot_classic_lays_the_meld_that_uses_the_taken_card() -> None:
    """After opening, seat 0 takes the 8H: 6S 7S 8S 9S lays more penalty than
    8S 8D 8H, but leaves the 8H in hand, which must be used this turn."""
    hand = "KS KH KD QS QH QD 6S 7S 8S 9S 8D 3H JC 2H"
    table = classic([hand, LONER_B], discard="5S", stock="5C 8H")
    table.draw(0)
    table.meld(0, "KS KH KD", "QS QH QD")
    table.discard(0, "5C")
    table.draw(1)
    table.discard(1, "8H")
    table.take(0)
    action = GreedyBot().move(table.state, 0)
    assert isinstance(action, Meld), action
    assert table.state.taken_discard in {c for spec in action.melds for c in spec.cards}
    table.act(0, action)
    assert not table.state.hands[0].count(table.state.taken_discard)
    action = GreedyBot().move(table.state, 0)
    assert action is not None, "the bot has a move left: its discard"
    table.act(0, action)
    assert table.state.current == 1


# --- against every set of melds of small hands -------------------------------------------


def _best_layout(cards: tuple[int, ...], rules: Ruleset) -> int | None:
    """The most ``cards`` count in an opening as one meld, or None if they make none."""
    deck = rules.deck
    best: int | None = None
    with contextlib.suppress(RuleError):
        best = meld_points(check_meld(cards, rules, kind=MeldKind.GROUP), rules)
    jokers = [c for c in cards if deck.is_joker(c)]
    naturals = [c for c in cards if not deck.is_joker(c)]
    for ace_high in (False, True):
        ranked = sorted(
            naturals, key=lambda c: 14 if ace_high and deck.rank[c] == 1 else deck.rank[c]
        )
        for places in itertools.combinations(range(len(cards)), len(jokers)):
            rest, wild = iter(ranked), iter(jokers)
            order = [next(wild) if i in places else next(rest) for i in range(len(cards))]
            try:
                shape = check_meld(order, rules, kind=MeldKind.RUN)
            except RuleError:
                continue
            points = meld_points(shape, rules)
            best = points if best is None else max(best, points)
    return best


def _least_penalty_opening(
    hand: list[int], rules: Ruleset, threshold: int, must_use: int
) -> int | None:
    """By brute force: the least penalty left by melds that open and hold ``must_use``."""
    melds = []
    for size in range(3, len(hand) + 1):
        for cards in itertools.combinations(hand, size):
            points = _best_layout(cards, rules)
            if points is not None:
                melds.append((frozenset(cards), points))
    penalty = {c: rules.penalties.of_rank(rules.deck.rank[c]) for c in hand}
    best: list[int] = []

    def pick(left: frozenset[int], start: int, points: int, used: bool) -> None:
        opens = points >= threshold or len(left) <= rules.opening_exempt_left
        if opens and (must_use < 0 or used):
            best.append(sum(penalty[c] for c in left))
        for i in range(start, len(melds)):
            cards, value = melds[i]
            if cards <= left:
                pick(left - cards, i + 1, points + value, used or must_use in cards)

    pick(frozenset(hand), 0, 0, False)
    return min(best) if best else None


POOL = [
    c
    for c in RAMI51.deck.ids()
    if RAMI51.deck.is_joker(c)
    or (RAMI51.deck.suit[c] < 2 and RAMI51.deck.rank[c] in (1, 2, 3, 4, 9, 10, 12, 13))
]
"""Few ranks and suits, both copies and the jokers: small hands full of melds."""


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(
    hand=st.lists(st.sampled_from(POOL), min_size=7, max_size=8, unique=True),
    threshold=st.sampled_from([30, 40, 51]),
    use=st.integers(-1, 7),
)
def test_find_opening_leaves_the_least_penalty_of_any_melds_that_open(
    hand: list[int], threshold: int, use: int
) -> None:
    must_use = hand[use] if 0 <= use < len(hand) else -1
    rules = RAMI51
    found = find_opening(
        hand, rules, threshold=threshold, exempt_left=rules.opening_exempt_left, must_use=must_use
    )
    expected = _least_penalty_opening(hand, rules, threshold, must_use)
    if found is None or expected is None:
        assert found is None and expected is None, (found, expected)
        return
    assert found.penalty == expected
    used = [c for m in found.melds for c in m.cards]
    assert len(set(used)) == len(used) and set(used) <= set(hand)
    for meld in found.melds:
        check_meld(meld.cards, rules, kind=meld.kind)
    points = sum(meld_points(m, rules) for m in found.melds)
    assert points >= threshold or len(hand) - len(used) <= rules.opening_exempt_left
    assert must_use < 0 or must_use in used
