"""A turn: draw, meld, lay off, discard. RULES.md §2 rows `taking the discard`,
`opening`, `lay off`, `discarding a joker`, `going out`, `"faire rami"`,
`invalid meld`, and the decision on discarding the card just taken; with the
seed text's examples (4♣ 5♣ 6♣ 9♥; 5♥ 6♥ 7♥ + 8♥ by an opponent)."""

from __future__ import annotations

from services.game.rules import LayOff, Meld, MeldSpec, Phase, Reason
from services.game.rules.events import Discarded, LaidOff, Melded, RoundEnded
from services.game.rules.melds import fits
from services.game.rules.scoring import hand_penalty

from .helpers import Table, assert_conserved

# Four melds (two runs, a group, a run) and a KS.
OPENER = "7S 8S 9S QD QH QC 2D 3D 4D 4C 5C 6C KS"
# Seat 1 holds no meld, so it can only draw and discard unless a test gives it one.
LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C"


def test_taking_the_discard_is_allowed_any_time_and_the_card_may_stay_in_hand() -> None:
    table = Table([OPENER, LONER], "KH", "5H 6D")
    table.take(0)  # first move of the round, before opening, with no meld for it
    assert "KH" in table.hand(0).split()
    table.discard(0, "KS")
    table.take(1)  # seat 1 takes the KS seat 0 just threw, and keeps it too
    table.discard(1, "AS")
    table.draw(0)
    assert "KH" in table.hand(0).split(), "the card stayed in hand through the turn"
    assert "KS" in table.hand(1).split()
    assert_conserved(table.state)


def test_discard_just_taken_is_refused_decision() -> None:
    table = Table([OPENER, LONER], "KH")
    table.take(0)
    assert table.refuse(0, table.discard_action(0, "KH")).reason == Reason.DISCARD_TAKEN_CARD
    table.discard(0, "KS")
    # Next time round it may go: the rule is for the turn it was taken.
    table.draw(1)
    table.discard(1, "AS")
    table.draw(0)
    table.discard(0, "KH")
    assert table.top() == "KH"


def test_opening_any_single_valid_meld_opens_even_a_brelan_of_twos() -> None:
    table = Table(["2S 2H 2D 5C 7C 9C JC KC 4H 6H 8D TD QD", LONER], "KH")
    table.draw(0)
    assert table.state.opened == [False, False]
    table.meld(0, "2S 2H 2D")  # 6 points: no threshold in cafe
    assert table.state.opened == [True, False]
    assert isinstance(table.events[0], Melded)


def test_opening_needs_no_pure_run_a_run_with_a_joker_opens() -> None:
    table = Table(["5H JK 7H 2C 9C JC KC 4S 6S 8D TD QD AD", LONER], "KH")
    table.draw(0)
    table.meld(0, "5H JK 7H")
    assert table.state.opened[0]


def test_lay_off_only_after_opening() -> None:
    table = Table([OPENER, LONER], "KH", "8D TS")
    table.draw(0)
    table.meld(0, "7S 8S 9S")
    table.discard(0, "KS")
    table.draw(1)  # TS would fit seat 0's 7S 8S 9S, but seat 1 has not opened
    assert fits(table.table_meld(1), table.card(1, "TS"), table.ruleset) is not None
    refusal = table.refuse(1, LayOff(1, table.cards(1, "TS")))
    assert refusal.reason == Reason.NOT_OPENED


def test_lay_off_allowed_once_opened_earlier_in_the_same_turn() -> None:
    table = Table([OPENER, "5H 6H 7H TS AS 3D JH 2C 4S 6C 8C TH QS"], "KH", "8D 8H")
    table.draw(0)
    table.meld(0, "7S 8S 9S")
    table.discard(0, "KS")
    table.draw(1)
    assert table.refuse(1, LayOff(1, table.cards(1, "TS"))).reason == Reason.NOT_OPENED
    table.meld(1, "5H 6H 7H")  # opens...
    table.lay_off(1, 1, "TS")  # ...so the lay-off on seat 0's run goes through
    assert table.meld_codes(1) == "7S 8S 9S TS"
    assert table.meld_codes(2) == "5H 6H 7H"


def test_seed_example_8h_laid_off_by_an_opponent_on_5h_6h_7h() -> None:
    # Seat 0 lays 5H 6H 7H; seat 1 opens with its own meld, then adds the 8H.
    table = Table(
        ["5H 6H 7H AS 3D 9S JH 2C 4S 6C 8C TD QS", "9C 9D 9S 8H 2S 4D 6D 8D TC QC KC AC 3C"],
        "KH",
        "KD 5S",
    )
    table.draw(0)
    table.meld(0, "5H 6H 7H")
    table.discard(0, "KD")
    table.draw(1)
    assert table.refuse(1, LayOff(1, table.cards(1, "8H"))).reason == Reason.NOT_OPENED
    table.meld(1, "9C 9D 9S")
    events = table.lay_off(1, 1, "8H")
    laid = events[0]
    assert isinstance(laid, LaidOff) and laid.seat == 1
    assert table.meld_codes(1) == "5H 6H 7H 8H"
    assert table.table_meld(1).owner == 0, "the meld stays its owner's"
    assert "8H" not in table.hand(1).split()


def test_lay_off_of_a_card_that_does_not_fit_is_refused() -> None:
    table = Table([OPENER, LONER], "KH", "TS")
    table.draw(0)
    table.meld(0, "7S 8S 9S", "QD QH QC")
    assert table.refuse(0, LayOff(1, table.cards(0, "KS"))).reason == Reason.LAY_OFF_INVALID
    assert table.refuse(0, LayOff(2, table.cards(0, "2D"))).reason == Reason.LAY_OFF_INVALID
    assert table.refuse(0, LayOff(9, table.cards(0, "TS"))).reason == Reason.MELD_NOT_FOUND
    table.lay_off(0, 1, "TS")
    assert table.meld_codes(1) == "7S 8S 9S TS"


def test_going_out_seed_example_meld_4c_5c_6c_then_discard_9h() -> None:
    # Turn 1: seat 0 opens with three melds, lays the drawn 5D off, throws KS:
    # 4C 5C 6C left. Turn 3: it draws 9H, lays the club run, discards the 9H.
    table = Table([OPENER, LONER], "KH", "5D TS 9H")
    table.draw(0)
    table.meld(0, "7S 8S 9S", "QD QH QC", "2D 3D 4D")
    table.lay_off(0, 3, "5D")
    table.discard(0, "KS")
    assert table.hand(0) == "4C 5C 6C"
    table.draw(1)
    table.discard(1, "TS")
    table.draw(0)
    assert table.hand(0) == "9H 4C 5C 6C"
    table.meld(0, "4C 5C 6C")
    events = table.discard(0, "9H")
    assert [type(e).__name__ for e in events] == [
        "Discarded",
        "RoundEnded",
        "DeckRevealed",
        "GameEnded",
    ]
    ended = events[1]
    assert isinstance(ended, RoundEnded) and ended.winner == 0 and ended.reason == "went_out"
    assert table.state.hands[0] == [] and table.state.phase == Phase.GAME_OVER
    assert ended.penalties == (0, hand_penalty(table.state.hands[1], table.ruleset))


def test_going_out_never_melds_the_last_card_must_keep_card() -> None:
    table = Table([OPENER, LONER], "KH", "5D TS 7C")
    table.draw(0)
    table.meld(0, "7S 8S 9S", "QD QH QC", "2D 3D 4D")
    table.lay_off(0, 3, "5D")
    table.discard(0, "KS")
    table.draw(1)
    table.discard(1, "TS")
    table.draw(0)  # 7C: 4C 5C 6C 7C could all go down, but one card must stay
    assert table.refuse(0, table.meld_action(0, "4C 5C 6C 7C")).reason == Reason.MUST_KEEP_CARD
    table.meld(0, "4C 5C 6C")
    refusal = table.refuse(0, LayOff(4, table.cards(0, "7C")))
    assert refusal.reason == Reason.MUST_KEEP_CARD
    events = table.discard(0, "7C")  # the discard closes the winning turn
    assert isinstance(events[0], Discarded) and isinstance(events[1], RoundEnded)


def test_faire_rami_laying_the_whole_hand_at_once_is_allowed_with_no_bonus() -> None:
    hand = "7S 8S 9S TS QD QH QC 2D 3D 4D 5C 6C 7C"
    table = Table([hand, LONER], "KH", "KD")
    table.draw(0)
    assert not table.state.opened[0]
    table.meld(0, "7S 8S 9S TS", "QD QH QC", "2D 3D 4D", "5C 6C 7C")
    events = table.discard(0, "KD")
    ended = events[1]
    assert isinstance(ended, RoundEnded) and ended.winner == 0
    loser = hand_penalty(table.state.hands[1], table.ruleset)
    assert ended.penalties == (0, loser), "no doubling, no bonus"
    assert table.state.totals == [0, loser]


def test_joker_discard_refused_unless_it_is_the_last_card() -> None:
    table = Table(["7S 8S 9S QD QH QC 2D 3D 4D 4C 5C 6C JK", LONER], "KH", "7C")
    table.draw(0)
    refusal = table.refuse(0, table.discard_action(0, "JK"))
    assert refusal.reason == Reason.JOKER_DISCARD_FORBIDDEN
    table.meld(0, "7S 8S 9S", "QD QH QC", "2D 3D 4D", "4C 5C 6C")
    assert table.refuse(0, table.discard_action(0, "JK")).reason == Reason.JOKER_DISCARD_FORBIDDEN
    table.lay_off(0, 4, "7C")
    events = table.discard(0, "JK")  # the last card: discarding it wins
    ended = events[1]
    assert isinstance(ended, RoundEnded) and ended.winner == 0


def test_invalid_meld_is_refused_and_nothing_changes() -> None:
    table = Table([OPENER, LONER], "KH")
    table.draw(0)
    assert table.refuse(0, table.meld_action(0, "7S 8S QD")).reason == Reason.MELD_INVALID
    # One bad meld in a batch refuses the whole action: the good one stays in hand.
    batch = table.meld_action(0, "7S 8S 9S", "2D 3D 4C")
    assert table.refuse(0, batch).reason == Reason.MELD_INVALID
    assert table.state.melds == [] and not table.state.opened[0]
    assert table.refuse(0, Meld(())).reason == Reason.NOTHING_TO_MELD


def test_actions_out_of_turn_or_with_cards_not_held_are_refused() -> None:
    table = Table([OPENER, LONER], "KH")
    assert table.refuse(1, table.draw_action()).reason == Reason.NOT_YOUR_TURN
    assert table.refuse(0, table.discard_action(0, "KS")).reason == Reason.MUST_DRAW_FIRST
    table.draw(0)
    assert table.refuse(0, table.draw_action()).reason == Reason.ALREADY_DREW
    not_held = table.cards(1, "AS 3H 5S")
    assert table.refuse(0, Meld((MeldSpec(not_held),))).reason == Reason.CARD_NOT_IN_HAND
    twice = table.cards(0, "7S 8S")
    refusal = table.refuse(0, Meld((MeldSpec((*twice, twice[0])),)))
    assert refusal.reason == Reason.CARD_DUPLICATED
    assert table.refuse(0, Meld((MeldSpec((500, 501, 502)),))).reason == Reason.CARD_UNKNOWN
    assert table.refuse(5, table.draw_action()).reason == Reason.NOT_SEATED
