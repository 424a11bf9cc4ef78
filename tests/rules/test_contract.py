"""`contract`, rami contrat (Liverpool): RULES.md §5, one test per row and decision,
with seed 004's examples (K, 7, A and the joker left = 47; two 3s and a 4 = 10;
3-6 then 7-10 of spades count as one run, 3-6 and 5-8 or 3-6 and 8-J as two).
The "Puis-je ?" claims have their own file, test_claims.py."""

from __future__ import annotations

import pytest

from services.game.rules import (
    SYSTEM,
    Deal,
    Discard,
    LayOff,
    Phase,
    Reason,
    RuleError,
    SwapJoker,
    TableOptions,
    hand_penalty,
    legal_actions,
    new_game,
    parse_cards,
    preset,
    validate_meld,
    view,
)
from services.game.rules.events import (
    Drew,
    EndReason,
    GameEnded,
    Reshuffled,
    RoundDealt,
    RoundEnded,
)
from services.game.rules.ruleset import CONTRACTS, Contract, effective_options
from services.game.rules.scoring import card_penalty

from .helpers import Table, assert_conserved
from .test_claims import HANDS as CLAIM_HANDS

CONTRACT = preset("contract")

GROUPS = "7S 7S 7D KH KH KC 2C 3C 4C 5C"
"""Deal 1's two groups of 3 with repeated suits, and a club run."""
LONER = "AS 3H 5S 8H 9D JH 2H 4S 6C TC"
"""No contract: 15 + 3 + 5 + 8 + 9 + 10 + 2 + 4 + 6 + 10 = 72 points."""
HEARTS = "AH 3H 5H 8D 9D JH 2H 4D 6C TC"
"""No contract and no spade."""


def contract(
    hands: list[str], discard: str = "QD", stock: str = "", *, seed: int = 0, **options: int
) -> Table:
    return Table(
        hands, discard, stock, ruleset=CONTRACT, options=TableOptions(**options), seed=seed
    )


def skip_deal(table: Table) -> None:
    """Deal in the deck's own order and let every turn time out up to the cap."""
    table.act(SYSTEM, Deal(tuple(table.deck.ids()), 0))
    while table.state.phase in (Phase.DRAW, Phase.PLAY):
        table.timeout()


def at_deal(number: int, hands: list[str], discard: str = "QD", stock: str = "") -> Table:
    """A two-seat table whose deal ``number`` is dealt with ``hands``; the deals
    before it run out at the turn cap."""
    if number == 1:
        return contract(hands, discard, stock)
    table = contract([LONER, LONER])
    while table.state.phase in (Phase.DRAW, Phase.PLAY):
        table.timeout()
    for _ in range(number - 2):
        skip_deal(table)
    table.deal(hands, discard, stock)
    assert table.state.round_no == number
    return table


def ended(table: Table) -> RoundEnded:
    return next(e for e in table.log[::-1] if isinstance(e, RoundEnded))


# --- deck and players -----------------------------------------------------------------


def test_contract_deck_two_packs_and_one_joker_105_cards() -> None:
    deck = CONTRACT.deck
    assert deck.size == 105
    assert [deck.code(c) for c in deck.ids() if deck.is_joker(c)] == ["JK"]


def test_contract_deck_decision_two_to_four_players_use_the_105_card_deck() -> None:
    for seats in (2, 3, 4):
        state = new_game(CONTRACT, seats)
        assert state.ruleset.deck.size == 105


def test_contract_seed_five_or_six_players_add_a_pack_and_a_joker_158_cards() -> None:
    """Seed 004: « À trois ou quatre, on utilise deux jeux de 52 cartes et un joker ;
    au-delà, on ajoute un jeu de cartes et un joker supplémentaires », and the game
    suits « les tablées de quatre à six »."""
    for seats in (5, 6):
        state = new_game(CONTRACT, seats)
        deck = state.ruleset.deck
        assert deck.size == 3 * 52 + 2 == 158
        assert [deck.code(c) for c in deck.ids() if deck.is_joker(c)] == ["JK", "JK"]
        assert len(deck.ids_of("7S")) == 3
    with pytest.raises(ValueError):
        new_game(CONTRACT, 7)
    six = CONTRACT.for_seats(6)
    hands = [GROUPS, *CLAIM_HANDS, "KS KD QS QC QH JH 7C 7H 6S 6H"]
    table = Table(hands, "QD", ruleset=six)
    assert table.state.ruleset is six and table.state.seats == 6
    assert [len(h) for h in table.state.hands] == [10] * 6
    assert len(table.state.stock) == 158 - 60 - 1
    assert_conserved(table.state)
    table.draw(0)
    table.meld(0, "7S 7S 7D", "KH KH KC")  # two 7S of three packs: one more is left
    assert table.state.opened[0]


# --- deals ----------------------------------------------------------------------------


def test_contract_deals_seven_of_10_then_12_cards_dealer_rotates_lowest_total_wins() -> None:
    table = contract([LONER, HEARTS, GROUPS])
    assert table.state.options.rounds == 7
    assert effective_options(CONTRACT, TableOptions(rounds=1)).rounds == 7
    while table.state.phase in (Phase.DRAW, Phase.PLAY):
        table.timeout()
    for _ in range(6):
        skip_deal(table)
    dealt = [e for e in table.log if isinstance(e, RoundDealt)]
    assert [e.round_no for e in dealt] == [1, 2, 3, 4, 5, 6, 7]
    assert [len(e.hands[0]) for e in dealt] == [10, 10, 10, 12, 12, 12, 12]
    assert [e.dealer for e in dealt] == [2, 0, 1, 2, 0, 1, 2]
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.reason == EndReason.ROUNDS_PLAYED
    totals = table.state.totals
    assert game.winner == min(range(3), key=lambda s: (totals[s], s))
    assert len(set(totals)) > 1 and totals[game.winner] == min(totals)


# --- the contracts --------------------------------------------------------------------


def test_contract_table_the_seven_contracts_of_seed_004() -> None:
    seed = (
        Contract(groups=2, runs=0),
        Contract(groups=1, runs=1),
        Contract(groups=0, runs=2),
        Contract(groups=3, runs=0),
        Contract(groups=2, runs=1),
        Contract(groups=1, runs=2),
        Contract(groups=0, runs=3, no_final_discard=True),
    )
    assert seed == CONTRACTS
    assert [CONTRACT.contract(n) for n in range(1, 8)] == list(CONTRACTS)
    assert CONTRACTS[0].describe() == "2 groups of 3"
    assert CONTRACTS[5].describe() == "1 group of 3 and 2 runs of 4"
    assert CONTRACTS[6].describe() == "3 runs of 4, no final discard"


# --- groups ---------------------------------------------------------------------------


def test_contract_groups_decision_suits_may_repeat() -> None:
    assert validate_meld(parse_cards("7S 7S 7D", CONTRACT), CONTRACT)
    cafe = preset("cafe")
    with pytest.raises(RuleError):
        validate_meld(parse_cards("7S 7S 7D", cafe), cafe)
    table = contract([GROUPS, LONER], stock="9H")
    table.draw(0)
    table.meld(0, "7S 7S 7D", "KH KH KC")
    assert table.state.opened[0] and table.meld_codes(1) == "7S 7S 7D"


def test_contract_groups_three_or_four_cards() -> None:
    assert validate_meld(parse_cards("7S 7S 7D 7H", CONTRACT), CONTRACT)
    with pytest.raises(RuleError):
        validate_meld(parse_cards("7S 7S 7D 7D 7H", CONTRACT), CONTRACT)
    with pytest.raises(RuleError):
        validate_meld(parse_cards("7S 7D", CONTRACT), CONTRACT)


# --- laying the contract --------------------------------------------------------------


def test_contract_melds_all_go_down_in_one_action() -> None:
    table = contract([GROUPS, LONER], stock="9H")
    table.draw(0)
    refusal = table.refuse(0, table.meld_action(0, "7S 7S 7D"))
    assert refusal.reason == Reason.CONTRACT_UNMET and "2 groups of 3" in refusal.message
    assert table.refuse(0, table.meld_action(0, "KH KH KC")).reason == Reason.CONTRACT_UNMET
    table.meld(0, "7S 7S 7D", "KH KH KC")
    assert table.state.opened[0]


def test_contract_a_groups_only_deal_says_nothing_of_runs() -> None:
    """Deal 1 asks for two groups: its refusal (a hint's "not yet" too) names no run."""
    table = contract([GROUPS, LONER], stock="9H")
    table.draw(0)
    refusal = table.refuse(0, table.meld_action(0, "7S 7S 7D"))
    assert refusal.message == "This deal's contract is 2 groups of 3, laid all at once."


def test_contract_melds_nothing_more_in_the_contract_action_the_rest_comes_after() -> None:
    table = contract([GROUPS, LONER], stock="9H")
    table.draw(0)
    action = table.meld_action(0, "7S 7S 7D", "KH KH KC", "2C 3C 4C 5C")
    assert table.refuse(0, action).reason == Reason.CONTRACT_UNMET
    table.meld(0, "7S 7S 7D", "KH KH KC")
    table.meld(0, "2C 3C 4C")  # once the contract is down: a run of 3 is fine
    assert table.meld_codes(3) == "2C 3C 4C"


def test_contract_melds_a_carre_satisfies_a_group_of_3() -> None:
    table = contract(["7S 7S 7D 7H KH KH KC 2C 3C 4C", LONER], stock="9H")
    table.draw(0)
    table.meld(0, "7S 7S 7D 7H", "KH KH KC")
    assert table.state.opened[0]


def test_contract_melds_a_longer_run_satisfies_a_run_of_4_but_a_run_of_3_does_not() -> None:
    hand = "4H 5H 6H 7H 8H QS QS QD 2C 9D"
    table = at_deal(2, [LONER, hand], stock="KC")
    assert table.state.current == 1
    table.draw(1)
    refusal = table.refuse(1, table.meld_action(1, "QS QS QD", "4H 5H 6H"))
    assert refusal.reason == Reason.CONTRACT_UNMET
    table.meld(1, "QS QS QD", "4H 5H 6H 7H 8H")
    assert table.state.opened[1]


@pytest.mark.parametrize(
    ("hand", "runs", "counts_twice"),
    [
        ("3S 4S 5S 6S 7S 8S 9S TS 2D KC", ["3S 4S 5S 6S", "7S 8S 9S TS"], False),
        ("3S 4S 5S 6S 7S 8S 9S TS 2D KC", ["3S 4S 5S 6S 7S 8S 9S TS"], False),
        ("3S 4S 5S 6S 5S 6S 7S 8S 2D KC", ["3S 4S 5S 6S", "5S 6S 7S 8S"], True),
        ("3S 4S 5S 6S 8S 9S TS JS 2D KC", ["3S 4S 5S 6S", "8S 9S TS JS"], True),
        ("3S 4S 5S 6S 7H 8H 9H TH 2D KC", ["3S 4S 5S 6S", "7H 8H 9H TH"], True),
    ],
    ids=["adjacent", "one-long-run", "overlapping", "gapped", "two-suits"],
)
def test_contract_melds_seed_adjacent_runs_count_once_overlapping_or_gapped_twice(
    hand: str, runs: list[str], counts_twice: bool
) -> None:
    table = at_deal(3, [hand, HEARTS], stock="KH")
    assert table.state.current == 0
    table.draw(0)
    if counts_twice:
        table.meld(0, *runs)
        assert table.state.opened[0]
    else:
        refusal = table.refuse(0, table.meld_action(0, *runs))
        assert refusal.reason == Reason.CONTRACT_UNMET and "join" in refusal.message


# --- before and after the contract ----------------------------------------------------


JOKER_GROUPS = "7S 7D JK KH KH KC 2C 3C 4C 5C"
CLAIMER = "7C 5S 5H 5D 9C 9C 9H 2D 3D 4D"


def jokered_table() -> Table:
    """Seat 0 has laid 7S 7D JK and KH KH KC; seat 1 holds a 7 and has drawn."""
    table = contract([JOKER_GROUPS, CLAIMER], stock="8H 8D")
    table.draw(0)
    table.meld(0, "7S 7D JK", "KH KH KC")
    table.discard(0, "8H")
    table.draw(1)
    return table


def test_contract_before_the_contract_no_other_meld_no_lay_off_no_swap() -> None:
    table = jokered_table()
    assert table.refuse(1, table.meld_action(1, "2D 3D 4D")).reason == Reason.CONTRACT_UNMET
    refusal = table.refuse(1, LayOff(1, table.cards(1, "7C")))
    assert refusal.reason == Reason.NOT_OPENED and "contract" in refusal.message
    swap = table.swap(1, 1, "7C", new_meld="2D 3D 4D JK")
    assert table.refuse(1, swap).reason == Reason.NOT_OPENED


def test_contract_after_the_contract_other_melds_and_lay_offs_on_anyones_melds() -> None:
    table = jokered_table()
    table.meld(1, "5S 5H 5D", "9C 9C 9H")
    table.meld(1, "2D 3D 4D")
    table.lay_off(1, 1, "7C")  # on seat 0's group
    assert table.meld_codes(1) == "7S 7D JK 7C" and table.table_meld(1).owner == 0
    assert table.meld_codes(5) == "2D 3D 4D"


def test_contract_joker_swap_after_the_own_contract_and_melded_again_at_once() -> None:
    table = jokered_table()
    table.meld(1, "5S 5H 5D", "9C 9C 9H")
    joker = table.joker_of(1)
    bare = SwapJoker(1, joker, table.card(1, "7C"))
    assert table.refuse(1, bare).reason == Reason.SWAP_JOKER_NOT_PLACED
    table.act(1, table.swap(1, 1, "7C", new_meld="2D 3D 4D JK"))
    assert table.meld_codes(1) == "7S 7D 7C" and table.meld_codes(5) == "2D 3D 4D JK"
    assert joker not in table.state.hands[1]


def test_contract_seed_a_joker_may_be_discarded_at_any_time() -> None:
    """Seed 004 sets no limit on discarding a joker, and its scoring presumes a
    player may get rid of one: « une carte libre restée en jeu coûte 15 points à
    celui qui ne s'en débarrasse pas ». `cafe`'s last-card-only rule is not there."""
    table = contract([SEED_LOSER, LONER], stock="8H 8D")
    table.draw(0)
    assert any(
        isinstance(m, Discard) and table.deck.is_joker(m.card)
        for m in legal_actions(table.state, 0)
    )
    table.discard(0, "JK")  # mid-hand, ten cards left, contract not laid
    assert table.top() == "JK" and len(table.state.hands[0]) == 10
    assert table.state.current == 1


# --- going out ------------------------------------------------------------------------


SEED_LOSER = "5S 5H 5D 9C 9C 9H KD 7H AS JK"
"""Lays its contract and keeps K, 7, A and the joker: 10 + 7 + 15 + 15 = 47."""


def test_contract_seed_example_k_7_a_joker_left_score_47_the_one_out_scores_0() -> None:
    assert hand_penalty(parse_cards("KD 7H AS JK", CONTRACT), CONTRACT) == 47
    assert hand_penalty(parse_cards("3S 3H 4D", CONTRACT), CONTRACT) == 10
    table = contract([GROUPS, SEED_LOSER], stock="8H 8D 6C")
    table.draw(0)
    table.meld(0, "7S 7S 7D", "KH KH KC")
    table.discard(0, "8H")
    table.draw(1)
    table.meld(1, "5S 5H 5D", "9C 9C 9H")
    table.discard(1, "8D")
    assert table.hand(1) == "AS 7H KD JK"
    table.draw(0)
    table.meld(0, "2C 3C 4C 5C")
    table.discard(0, "6C")
    result = ended(table)
    assert result.winner == 0 and result.reason == EndReason.WENT_OUT
    assert result.penalties == (0, 47)


def test_contract_going_out_in_deals_1_to_6_by_discarding_the_last_card() -> None:
    table = contract([GROUPS, LONER], stock="8H 8D 6C")
    table.draw(0)
    table.meld(0, "7S 7S 7D", "KH KH KC")
    table.discard(0, "8H")
    table.draw_and_throw(1)
    table.draw(0)  # 6C
    action = table.meld_action(0, "2C 3C 4C 5C 6C")
    assert table.refuse(0, action).reason == Reason.MUST_KEEP_CARD
    table.meld(0, "2C 3C 4C 5C")
    assert table.refuse(0, LayOff(3, table.cards(0, "6C"))).reason == Reason.MUST_KEEP_CARD
    table.discard(0, "6C")
    assert table.kinds()[:3] == ["ClaimWindowClosed", "Discarded", "RoundEnded"]
    assert ended(table).penalties == (0, 72)


SEVEN = "3S 4S 5S 6S 7H 8H 9H TH JD QD KD AD"


def test_contract_deal_7_out_with_no_discard_by_laying_every_card_in_three_runs() -> None:
    table = at_deal(7, [SEVEN, LONER + " 2S 3D"], stock="7S")
    assert table.state.current == 0 and len(table.state.hands[0]) == 12
    table.draw(0)
    runs = ("3S 4S 5S 6S 7S", "7H 8H 9H TH", "JD QD KD AD")
    refusal = table.refuse(0, table.meld_action(0, "3S 4S 5S 6S", *runs[1:]))
    assert refusal.reason == Reason.CONTRACT_UNMET and "every card" in refusal.message
    table.meld(0, *runs)
    assert table.kinds()[:3] == ["Melded", "ClaimWindowClosed", "RoundEnded"]
    assert ended(table).winner == 0 and ended(table).reason == EndReason.WENT_OUT
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.reason == EndReason.ROUNDS_PLAYED


def test_contract_deal_7_runs_that_join_count_once_even_beside_an_overlapping_run() -> None:
    # 3-6 and 7-J of spades join into one run; 5-8 overlaps both: two runs, not three.
    hand = "3S 4S 5S 6S 5S 6S 7S 8S 7S 8S 9S TS"
    table = at_deal(7, [hand, HEARTS + " 2D 3D"], stock="JS")
    table.draw(0)
    action = table.meld_action(0, "3S 4S 5S 6S", "5S 6S 7S 8S", "7S 8S 9S TS JS")
    assert table.refuse(0, action).reason == Reason.CONTRACT_UNMET


# --- scoring --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "points"),
    [
        ("2S", 2),
        ("9H", 9),
        ("TD", 10),
        ("JC", 10),
        ("QS", 10),
        ("KH", 10),
        ("AD", 15),
        ("JK", 15),
    ],
)
def test_contract_scoring_face_value_faces_10_ace_and_joker_15(code: str, points: int) -> None:
    for card in CONTRACT.deck.ids_of(code):
        assert card_penalty(card, CONTRACT) == points


# --- stock exhausted ------------------------------------------------------------------


def test_contract_stock_exhausted_discards_become_the_stock_no_card_turned_up() -> None:
    # The one joker sits in a hand: every card drawn from the stock can be thrown.
    table = contract([LONER.replace("AS", "JK"), GROUPS], seed=3)
    while table.state.stock:
        table.draw_and_throw(table.state.current)
    pile = list(table.state.discard)
    assert len(pile) == 105 - 2 * 10
    seat = table.state.current
    reshuffled, drew = table.draw(seat)[:2]
    assert isinstance(reshuffled, Reshuffled) and isinstance(drew, Drew)
    assert reshuffled.stock_size == len(pile) and reshuffled.discard_top == -1
    assert table.state.discard == [] and view(table.state, None).discard == ()
    assert sorted([*table.state.stock, drew.card]) == sorted(pile)
    assert_conserved(table.state)
