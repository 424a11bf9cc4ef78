"""`classic`, traditional French rami: RULES.md §4, one test per row and decision on
the deck, players and deal, the melds, the joker limits and the joker swap,
"Carte !" and the stock exhausted; with seed 002's example of the 8♠ 9♠ 10♠ run a
7♠ extends. Taking the discard and the opening are in test_classic_opening.py;
going out, scoring and the end of the game in test_classic_scoring.py. Both take
their hands and helpers from here."""

from __future__ import annotations

import pytest

from services.game.rules import (
    SYSTEM,
    Deal,
    LayOff,
    Reason,
    RuleError,
    SwapJoker,
    TableOptions,
    apply,
    legal_actions,
    new_game,
    parse_cards,
    preset,
    validate_meld,
    view,
)
from services.game.rules.events import (
    CardAnnounced,
    Discarded,
    Drew,
    JokerSwapped,
    Reshuffled,
    RoundDealt,
)

from .helpers import Table, assert_conserved

CLASSIC = preset("classic")

RAMI = "7S 8S 9S TS QD QH QC 2D 3D 4D 5C 6C 7C 8C"
"""Fourteen cards in four melds worth 34 + 30 + 9 + 26 = 99."""
RAMI_MELDS = ("7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C 8C")
LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C 2C"
"""No meld; 96 points."""
LONER_B = "AD 3D 5D 7D 9D JD 2C 4C 6C 8C TC QC 9H 2S"
"""No meld; 96 points."""


def classic(
    hands: list[str], discard: str = "KD", stock: str = "", *, seed: int = 0, **options: int
) -> Table:
    return Table(hands, discard, stock, ruleset=CLASSIC, options=TableOptions(**options), seed=seed)


# --- deck, players, deal --------------------------------------------------------------


def test_classic_deck_decision_108_cards_two_packs_and_four_jokers() -> None:
    deck = CLASSIC.deck
    assert deck.size == 108
    assert sum(1 for c in deck.ids() if deck.is_joker(c)) == 4


def test_classic_seed_players_2_to_6_with_the_108_cards() -> None:
    """Seed 002: « Comment jouer au Rami ? (de 2 à 6 joueurs) », and « Le donneur
    utilise l'intégralité des cent huit cartes »: six hands of 14 leave a stock."""
    for seats in (2, 3, 4, 5, 6):
        state = new_game(CLASSIC, seats)
        assert state.seats == seats and state.ruleset.deck.size == 108
    for seats in (1, 7):
        with pytest.raises(ValueError):
            new_game(CLASSIC, seats)
    state, _ = apply(new_game(CLASSIC, 6), SYSTEM, Deal(tuple(CLASSIC.deck.ids()), 0), 0)
    assert [len(h) for h in state.hands] == [14] * 6
    assert len(state.stock) == 108 - 6 * 14 - 1
    assert state.current == 0 and state.dealer == 5
    assert_conserved(state)


def test_classic_deal_14_cards_each_and_the_first_discard_turned_up() -> None:
    table = classic([RAMI, LONER, LONER_B])
    dealt = table.events[0]
    assert isinstance(dealt, RoundDealt)
    assert [len(h) for h in dealt.hands] == [14, 14, 14]
    assert table.top() == "KD" and len(table.state.discard) == 1
    assert len(table.state.stock) == 108 - 3 * 14 - 1
    assert_conserved(table.state)


def test_classic_seed_melds_a_brelan_of_kings_needs_three_suits_a_run_one_suit() -> None:
    assert validate_meld(parse_cards("KD KH KS", CLASSIC), CLASSIC)
    assert validate_meld(parse_cards("TH JH QH", CLASSIC), CLASSIC)
    for bad in ("KD KD KH", "TH JH QS"):
        with pytest.raises(RuleError) as caught:
            validate_meld(parse_cards(bad, CLASSIC), CLASSIC)
        assert caught.value.reason == Reason.MELD_INVALID


def test_classic_seed_example_a_7s_laid_at_the_start_of_an_opponents_8s_9s_10s() -> None:
    owner = "8S 9S TS KS KH KD QC QD QH 2C 4D 6H 8C 3S"
    other = "7S JC JD JH AH AD AC 2D 5C 9D 4H 6C 3H 5D"
    table = classic([owner, other], stock="2H 2S")
    table.draw(0)
    table.meld(0, "8S 9S TS", "KS KH KD")  # 27 + 30
    table.discard(0, "2H")
    table.draw(1)
    assert table.refuse(1, LayOff(1, table.cards(1, "7S"))).reason == Reason.NOT_OPENED
    table.meld(1, "JC JD JH", "AH AD AC")  # 30 + 33
    table.lay_off(1, 1, "7S")
    assert table.meld_codes(1) == "7S 8S 9S TS" and table.table_meld(1).owner == 0


# --- joker limits ---------------------------------------------------------------------


@pytest.mark.parametrize("text", ["5H JK JK 8H", "8S 8H JK JK", "4D 5D JK 7D JK"])
def test_classic_joker_limits_at_most_one_joker_in_any_meld_decision(text: str) -> None:
    cafe = preset("cafe")
    assert validate_meld(parse_cards(text, cafe), cafe)
    with pytest.raises(RuleError) as caught:
        validate_meld(parse_cards(text, CLASSIC), CLASSIC)
    assert caught.value.reason == Reason.MELD_JOKER_LIMIT


def test_classic_joker_limits_no_second_joker_laid_off_on_a_meld() -> None:
    hand = "5D JK 7D KS KH KC QS QH QC JK 2C 4C 9H 3S"
    table = classic([hand, LONER], stock="TS")
    table.draw(0)
    table.meld(0, "5D JK 7D", "KS KH KC", "QS QH QC")  # 18 + 30 + 30
    refusal = table.refuse(0, LayOff(1, table.cards(0, "JK")))
    assert refusal.reason == Reason.LAY_OFF_INVALID
    table.lay_off(0, 2, "JK")  # the carré's first joker is fine
    assert table.meld_codes(2) == "KS KH KC JK"


# --- joker swap -----------------------------------------------------------------------

SWAP_OWNER = "8S 8H JK 5D JK 7D KS KH KD 9S 9H 9D JK 2C"
"""Opens with a brelan 8S 8H JK (1), a run 5D JK 7D (2), KS KH KD (3) and a
carré 9S 9H 9D JK (4): 108 points."""
SWAPPER = "8D 8C 6D 9C TC JC QC KC 4H 5H 6H 2S 3D AH"
"""Opens with TC JC QC KC (5) and 4H 5H 6H (6) and holds 6D, 8D 8C and 9C."""


def swap_table() -> Table:
    table = classic([SWAP_OWNER, SWAPPER], stock="3S 4S")
    table.draw(0)
    table.meld(0, "8S 8H JK", "5D JK 7D", "KS KH KD", "9S 9H 9D JK")
    table.discard(0, "3S")
    table.draw(1)
    return table


def swap(table: Table, meld_id: int, replacement: str, second: str = "") -> SwapJoker:
    """A swap whose retrieved joker stays in hand."""
    extra = table.card(1, second) if second else -1
    return SwapJoker(meld_id, table.joker_of(meld_id), table.card(1, replacement), second=extra)


def test_classic_seed_any_player_may_take_a_joker_at_their_turn_opened_or_not() -> None:
    """Seed 002: « Quand une combinaison posée sur la table comporte un Joker, tout
    joueur peut à son tour s'emparer de ce dernier en le remplaçant par la carte
    qu'il représentait. » Only lay-offs need a first meld (« Un joueur qui a
    effectué sa première pose est ensuite libre [...] de compléter »)."""
    table = swap_table()
    assert not table.state.opened[1]
    offered = swap(table, 2, "6D")
    assert offered in legal_actions(table.state, 1)
    joker = table.joker_of(2)
    table.act(1, offered)
    assert table.meld_codes(2) == "5D 6D 7D"
    assert joker in table.state.hands[1] and not table.state.opened[1]
    assert table.refuse(1, LayOff(3, table.cards(1, "KC"))).reason == Reason.NOT_OPENED
    # The joker taken back may go into the opening, laid afterwards.
    table.meld(1, "TC JC QC KC", "4H 5H 6H")
    assert table.state.opened[1]
    assert_conserved(table.state)


def test_classic_an_unopened_swap_keeps_the_joker_and_the_taken_card_for_the_opening() -> None:
    """Before the opening a swap lays nothing else: the joker stays in hand (a new
    meld or a lay-off with it would be laid before the opening), and a card taken
    from the discard pile still goes into the opening, not into a joker's place."""
    table = swap_table()
    placed = table.swap(1, 2, "6D", new_meld="JK 8D 8C")
    assert table.refuse(1, placed).reason == Reason.NOT_OPENED
    laid = table.swap(1, 2, "6D", lay_off=4)
    assert table.refuse(1, laid).reason == Reason.NOT_OPENED

    owner = SWAP_OWNER.replace("2C", "6D")
    taker = "TC JC QC KC 4D 5D 4H 5H 6H 2S 3S AH 8D 8C"
    table = classic([owner, taker], stock="3S 4S")
    table.draw(0)
    table.meld(0, "8S 8H JK", "5D JK 7D", "KS KH KD", "9S 9H 9D JK")
    table.discard(0, "6D")
    table.take(1)  # 6D opens with 4D 5D and TC JC QC KC: 55
    taken = swap(table, 2, "6D")
    assert taken not in legal_actions(table.state, 1)
    assert table.refuse(1, taken).reason == Reason.TAKEN_CARD_UNUSED
    table.meld(1, "TC JC QC KC", "4D 5D 6D")
    assert table.state.opened[1]


def test_classic_joker_swap_from_a_run_by_the_card_it_represents() -> None:
    table = swap_table()
    table.meld(1, "TC JC QC KC", "4H 5H 6H")
    assert table.refuse(1, swap(table, 2, "8D")).reason == Reason.SWAP_INVALID
    joker = table.joker_of(2)
    events = table.act(1, swap(table, 2, "6D"))
    assert isinstance(events[0], JokerSwapped) and events[0].joker == joker


def test_classic_joker_swap_decision_the_retrieved_joker_may_stay_in_hand() -> None:
    table = swap_table()
    table.meld(1, "TC JC QC KC", "4H 5H 6H")
    joker = table.joker_of(2)
    table.act(1, swap(table, 2, "6D"))
    assert joker in table.state.hands[1]
    table.discard(1, "2S")  # the turn ends with the joker still held
    assert joker in table.state.hands[1] and table.state.current == 0
    assert_conserved(table.state)


def test_classic_joker_swap_from_a_brelan_only_with_both_missing_cards() -> None:
    table = swap_table()
    table.meld(1, "TC JC QC KC", "4H 5H 6H")
    for one in ("8D", "8C"):
        assert table.refuse(1, swap(table, 1, one)).reason == Reason.SWAP_INVALID
    assert table.refuse(1, swap(table, 1, "8D", second="9C")).reason == Reason.SWAP_INVALID
    joker = table.joker_of(1)
    table.act(1, swap(table, 1, "8D", second="8C"))
    assert table.meld_codes(1) == "8S 8H 8D 8C"
    assert joker in table.state.hands[1]
    assert "8D" not in table.hand(1).split() and "8C" not in table.hand(1).split()


def test_classic_a_brelans_natural_card_is_not_taken_as_its_joker() -> None:
    table = swap_table()
    table.meld(1, "TC JC QC KC", "4H 5H 6H")
    before = table.meld_codes(1)
    natural = next(c for c in table.table_meld(1).cards if table.deck.code(c) == "8S")
    pull = SwapJoker(1, natural, table.card(1, "8D"), second=table.card(1, "8C"))
    assert table.refuse(1, pull).reason == Reason.SWAP_INVALID
    assert table.meld_codes(1) == before and natural not in table.state.hands[1]


def test_classic_joker_swap_decision_from_a_carre_by_the_one_missing_card() -> None:
    table = swap_table()
    table.meld(1, "TC JC QC KC", "4H 5H 6H")
    assert table.refuse(1, swap(table, 4, "9C", second="8D")).reason == Reason.SWAP_INVALID
    table.act(1, swap(table, 4, "9C"))
    assert table.meld_codes(4) == "9S 9H 9D 9C"


# --- "Carte !" ------------------------------------------------------------------------


def test_classic_carte_announced_when_a_discard_leaves_one_card() -> None:
    table = classic([RAMI, LONER], stock="KH 4H 9C")
    table.draw(0)
    table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C")
    assert not any(isinstance(e, CardAnnounced) for e in table.events)
    table.discard(0, "KH")
    assert table.kinds() == ["Discarded", "CardAnnounced", "TurnBegan"]
    assert table.events[1] == CardAnnounced(0)


def test_classic_carte_announced_when_a_meld_leaves_one_card() -> None:
    table = classic([RAMI, LONER], stock="KH")
    table.draw(0)
    table.meld(0, *RAMI_MELDS)
    assert table.kinds() == ["Melded", "CardAnnounced"]


def test_classic_carte_is_classic_only() -> None:
    cafe = Table(["7S 8S 9S TS QD QH QC 2D 3D 4D 5C 6C 7C", LONER.rsplit(" ", 1)[0]], "KD", "KH")
    cafe.draw(0)
    cafe.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D")
    cafe.discard(0, "KH")
    cafe.draw_and_throw(1)
    cafe.draw(0)
    cafe.meld(0, "5C 6C 7C")
    assert not any(isinstance(e, CardAnnounced) for e in cafe.log)


# --- stock exhausted ------------------------------------------------------------------


def test_classic_stock_exhausted_all_discards_top_included_make_the_new_stock() -> None:
    table = classic([LONER, LONER_B], seed=7)
    while table.state.stock:
        table.draw_and_throw(table.state.current)
    pile = list(table.state.discard)
    assert len(pile) == 108 - 2 * 14
    seat = table.state.current
    events = table.draw(seat)
    reshuffled, drew = events
    assert isinstance(reshuffled, Reshuffled) and isinstance(drew, Drew)
    assert reshuffled.stock_size == len(pile) and reshuffled.discard_top == -1
    state = table.state
    assert state.discard == [] and view(state, 1 - seat).discard == ()
    assert sorted([*state.stock, drew.card]) == sorted(pile), "the top card went in too"
    assert_conserved(state)
    table.discard(seat, table.deck.code(drew.card))
    assert isinstance(table.events[0], Discarded) and len(table.state.discard) == 1
