"""`classic`, traditional French rami: RULES.md §4, one test per row and decision,
with seed 002's examples (a joker in a group of 8s counts 8; the ace 11, or 1 in
A 2 3; the 8♠ 9♠ 10♠ run a 7♠ extends)."""

from __future__ import annotations

import pytest

from services.game.rules import (
    LayOff,
    Phase,
    Reason,
    RuleError,
    SeatStatus,
    SwapJoker,
    TableOptions,
    hand_penalty,
    new_game,
    parse_cards,
    preset,
    validate_meld,
    view,
)
from services.game.rules.events import (
    BoughtBack,
    CardAnnounced,
    Discarded,
    Drew,
    EndReason,
    GameEnded,
    JokerSwapped,
    PlayerEliminated,
    Reshuffled,
    RoundDealt,
    RoundEnded,
)
from services.game.rules.ruleset import effective_options
from services.game.rules.scoring import card_penalty, meld_points

from .helpers import Table, assert_conserved

CLASSIC = preset("classic")

RAMI = "7S 8S 9S TS QD QH QC 2D 3D 4D 5C 6C 7C 8C"
"""Fourteen cards in four melds worth 34 + 30 + 9 + 26 = 99."""
RAMI_MELDS = ("7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C 8C")
LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C 2C"
"""No meld; 96 points."""
JOKER_LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C JK"
"""No meld it lays; 94 + a joker (20) = 114 points."""
LONER_B = "AD 3D 5D 7D 9D JD 2C 4C 6C 8C TC QC 9H 2S"
"""No meld; 96 points."""
CHEAP = "2S 3H 4D 5C 2H 3D 4C 5S 2D 3C 4S 5H 6S 6D"
"""54 points."""
HEAVY = "KS KH KD KC QS QH QD QC JS JH JD JC AD AH"
"""142 points."""


def classic(
    hands: list[str], discard: str = "KD", stock: str = "", *, seed: int = 0, **options: int
) -> Table:
    return Table(hands, discard, stock, ruleset=CLASSIC, options=TableOptions(**options), seed=seed)


def ended(table: Table) -> RoundEnded:
    return next(e for e in table.log[::-1] if isinstance(e, RoundEnded))


def drawn_code(table: Table) -> str:
    drew = next(e for e in table.events if isinstance(e, Drew))
    return table.deck.code(drew.card)


def out_at_once(table: Table, seat: int) -> None:
    """``seat`` holds RAMI: it draws, lays all fourteen cards, throws the drawn one."""
    table.draw(seat)
    code = drawn_code(table)
    table.meld(seat, *RAMI_MELDS)
    table.discard(seat, code)


def open_then_out(table: Table, seat: int, others: list[int]) -> None:
    """``seat`` holds RAMI: it opens with two melds, the others draw and throw,
    then it lays the rest and throws its last card (no rami sec)."""
    table.draw(seat)
    code = drawn_code(table)
    table.meld(seat, *RAMI_MELDS[:2])
    table.discard(seat, code)
    for other in others:
        table.draw_and_throw(other)
    table.draw(seat)
    code = drawn_code(table)
    table.meld(seat, *RAMI_MELDS[2:])
    table.discard(seat, code)


# --- deck, players, deal --------------------------------------------------------------


def test_classic_deck_decision_108_cards_two_packs_and_four_jokers() -> None:
    deck = CLASSIC.deck
    assert deck.size == 108
    assert sum(1 for c in deck.ids() if deck.is_joker(c)) == 4


def test_classic_players_2_to_6_the_service_queues_2_to_4() -> None:
    for seats in (2, 3, 4):
        assert new_game(CLASSIC, seats).seats == seats
    for seats in (1, 5):
        with pytest.raises(ValueError):
            new_game(CLASSIC, seats)


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


# --- taking the discard ---------------------------------------------------------------

TAKER = "KS KH 7S 8S 9S 2D 4D 6D 8C TC QH 3C 5H JD"


def test_classic_taking_the_discard_before_opening_used_in_an_opening_of_51() -> None:
    table = classic([TAKER, LONER])
    table.take(0)  # the KD
    refusal = table.refuse(0, table.discard_action(0, "2D"))
    assert refusal.reason == Reason.TAKEN_CARD_UNUSED
    table.meld(0, "KS KH KD", "7S 8S 9S")  # 30 + 24 = 54
    table.discard(0, "2D")
    assert table.state.current == 1


def test_classic_taking_the_discard_the_card_may_not_stay_in_hand() -> None:
    table = classic([TAKER, LONER], discard="5D")
    table.take(0)  # 5D: 4D 5D 6D is a run, but worth 15, far from 51
    for code in ("2D", "QH", "8C"):
        refusal = table.refuse(0, table.discard_action(0, code))
        assert refusal.reason == Reason.TAKEN_CARD_UNUSED
    assert table.refuse(0, table.discard_action(0, "5D")).reason == Reason.DISCARD_TAKEN_CARD
    refusal = table.refuse(0, table.meld_action(0, "4D 5D 6D"))
    assert refusal.reason == Reason.OPENING_TOO_LOW


def test_classic_taking_the_discard_after_opening_used_in_a_lay_off_this_turn() -> None:
    table = classic([TAKER, LONER], discard="3D", stock="KD TS")
    table.draw(0)
    table.meld(0, "KS KH KD", "7S 8S 9S")
    table.discard(0, "2D")
    table.draw(1)
    table.discard(1, "TS")  # fits 7S 8S 9S
    table.take(0)
    assert table.refuse(0, table.discard_action(0, "QH")).reason == Reason.TAKEN_CARD_UNUSED
    table.lay_off(0, 2, "TS")
    table.discard(0, "QH")
    assert table.meld_codes(2) == "7S 8S 9S TS"


# --- opening --------------------------------------------------------------------------

OPENER = "TS JS QS 2C 3C 4C 5C 6C 7H 7D 7C KH KD AS"


def test_classic_opening_the_first_melds_must_total_51() -> None:
    table = classic([OPENER, LONER], stock="9H")
    table.draw(0)
    refusal = table.refuse(0, table.meld_action(0, "TS JS QS", "2C 3C 4C 5C 6C"))  # 50
    assert refusal.reason == Reason.OPENING_TOO_LOW and "51" in refusal.message
    table.meld(0, "TS JS QS", "7H 7D 7C")  # 51
    assert table.state.opened[0]
    assert table.state.options.opening_threshold == 51


def test_classic_opening_threshold_is_not_a_table_option() -> None:
    with pytest.raises(ValueError):
        effective_options(CLASSIC, TableOptions(opening_threshold=40))


def test_classic_opening_counted_over_one_action() -> None:
    table = classic([OPENER, LONER], stock="9H 4S 8D")
    table.draw(0)
    assert table.refuse(0, table.meld_action(0, "TS JS QS")).reason == Reason.OPENING_TOO_LOW
    table.discard(0, "9H")
    table.draw_and_throw(1)
    table.draw(0)
    assert table.refuse(0, table.meld_action(0, "7H 7D 7C")).reason == Reason.OPENING_TOO_LOW
    assert not table.state.opened[0]


def test_classic_seed_values_ace_11_or_1_in_a_low_run_joker_as_the_card_it_replaces() -> None:
    def points(text: str) -> int:
        return meld_points(validate_meld(parse_cards(text, CLASSIC), CLASSIC), CLASSIC)

    assert points("AS AH AD") == 33
    assert points("QH KH AH") == 31  # a high run: Dame, Roi, As
    assert points("AS 2S 3S") == 6  # a low run: the ace counts 1
    assert points("8S 8H JK") == 24, "a joker in a brelan of 8s counts 8"
    assert points("8S 9S JK") == 27  # the joker is the 10S


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


def test_classic_joker_swap_decision_only_after_opening() -> None:
    table = swap_table()
    assert table.refuse(1, swap(table, 2, "6D")).reason == Reason.NOT_OPENED
    table.meld(1, "TC JC QC KC", "4H 5H 6H")
    table.act(1, swap(table, 2, "6D"))
    assert table.meld_codes(2) == "5D 6D 7D"


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


# --- going out ------------------------------------------------------------------------


def test_classic_going_out_by_discarding_the_last_card() -> None:
    table = classic([RAMI, LONER], stock="KH")
    out_at_once(table, 0)
    assert table.kinds()[:2] == ["Discarded", "RoundEnded"]
    assert ended(table).winner == 0 and ended(table).reason == EndReason.WENT_OUT


def test_classic_going_out_by_melding_the_last_card() -> None:
    table = classic([RAMI, LONER], stock="9C")
    table.draw(0)
    table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C 8C 9C")
    assert table.kinds()[:2] == ["Melded", "RoundEnded"]
    assert table.state.hands[0] == [] and ended(table).winner == 0


def test_classic_going_out_decision_a_joker_may_be_discarded() -> None:
    table = classic([JOKER_LONER, LONER_B], stock="KH")
    table.draw(0)
    table.discard(0, "JK")  # fourteen cards left: in cafe this is refused
    assert table.top() == "JK"
    cafe = Table([RAMI.rsplit(" ", 1)[0], "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS JK"], "KD")
    cafe.draw_and_throw(0)
    cafe.draw(1)
    assert cafe.refuse(1, cafe.discard_action(1, "JK")).reason == Reason.JOKER_DISCARD_FORBIDDEN


# --- card values and scoring ----------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "points"),
    [
        ("JK", 20),
        ("AS", 11),
        ("JH", 10),
        ("QD", 10),
        ("KC", 10),
        ("TS", 10),
        ("9H", 9),
        ("2D", 2),
    ],
)
def test_classic_card_values_joker_20_ace_11_faces_10_others_face_value(
    code: str, points: int
) -> None:
    for card in CLASSIC.deck.ids_of(code):
        assert card_penalty(card, CLASSIC) == points


def test_classic_scoring_losers_add_their_hands_the_winner_scores_minus_10() -> None:
    table = classic([RAMI, LONER, LONER_B], stock="5D 6H 7D 8H")
    open_then_out(table, 0, [1, 2])
    assert ended(table).penalties == (-10, 96, 96)


def test_classic_scoring_a_joker_left_in_hand_doubles_that_players_points() -> None:
    table = classic([RAMI, JOKER_LONER, LONER_B], stock="5D 6H 7D 8H")
    open_then_out(table, 0, [1, 2])
    assert hand_penalty(table.state.hands[1], CLASSIC) == 114
    assert ended(table).penalties == (-10, 228, 96)


def test_classic_scoring_rami_sec_doubles_the_losers_and_the_bonus_minus_20() -> None:
    table = classic([RAMI, LONER, LONER_B], stock="5D")
    out_at_once(table, 0)
    assert ended(table).penalties == (-20, 192, 192)


def test_classic_scoring_decision_both_doublings_combine_times_four() -> None:
    table = classic([RAMI, JOKER_LONER, LONER_B], stock="5D")
    out_at_once(table, 0)
    assert ended(table).penalties == (-20, 4 * 114, 2 * 96)


# --- game end: elimination at 100, buy-backs ------------------------------------------


def test_classic_game_end_a_player_reaching_100_is_eliminated() -> None:
    table = classic([RAMI, CHEAP, HEAVY], stock="5D 6H 7D 8H")
    assert table.state.options.elimination_cap == 100
    open_then_out(table, 0, [1, 2])
    assert ended(table).penalties == (-10, 54, 142)
    assert PlayerEliminated(2, 142) in table.events
    assert table.state.status[2] == SeatStatus.ELIMINATED
    assert table.state.phase == Phase.DEAL


def test_classic_game_end_buy_back_restarts_at_the_highest_score_still_in_the_game() -> None:
    table = classic([RAMI, CHEAP, HEAVY], stock="5D 6H 7D 8H", buy_backs=1)
    open_then_out(table, 0, [1, 2])  # -10, 54, 142
    assert not any(isinstance(e, PlayerEliminated) for e in table.events)
    assert BoughtBack(2, 54, 1) in table.events, "every seat is told of the buy-back"
    assert table.state.totals == [-10, 54, 54], "back in at 54, the highest of -10 and 54"
    assert table.state.buy_backs == [0, 0, 1]
    assert table.state.status[2] == SeatStatus.PLAYING
    # Deal 2: seat 1 wins; seat 2 reaches 100 again, with no buy-back left.
    table.deal([CHEAP, RAMI, HEAVY], "KD", "5D 6H 7D 8H")
    open_then_out(table, 1, [2, 0])
    assert table.state.totals == [44, 44, 196]
    assert PlayerEliminated(2, 196) in table.events


def test_classic_game_end_up_to_three_buy_backs_then_the_last_player_left_wins() -> None:
    table = classic([RAMI, HEAVY], stock="KS", buy_backs=3)
    restarts = []
    bought = []
    for deal in range(4):
        if deal:
            table.deal([RAMI, HEAVY], "KD", "KS")
        if table.state.current == 1:
            table.draw_and_throw(1)
        out_at_once(table, 0)  # rami sec: -20 each deal, 2 x 142 for seat 1
        restarts.append(table.state.totals[1])
        bought += [e for e in table.events if isinstance(e, BoughtBack)]
    assert restarts[:3] == [-20, -40, -60], "back in at the winner's total each time"
    assert bought == [BoughtBack(1, -20, 1), BoughtBack(1, -40, 2), BoughtBack(1, -60, 3)]
    assert table.state.buy_backs == [0, 3]
    game = table.events[-1]
    assert isinstance(game, GameEnded) and game.reason == EndReason.LAST_STANDING
    assert game.winner == 0 and game.totals == (-80, -60 + 284)
    assert table.state.status[1] == SeatStatus.ELIMINATED


def test_classic_buy_backs_are_a_classic_option_of_at_most_three() -> None:
    assert effective_options(CLASSIC, TableOptions(buy_backs=3)).buy_backs == 3
    with pytest.raises(ValueError):
        effective_options(CLASSIC, TableOptions(buy_backs=4))
    for name in ("cafe", "rami51", "contract"):
        with pytest.raises(ValueError, match="buy-backs"):
            effective_options(preset(name), TableOptions(buy_backs=1))


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
