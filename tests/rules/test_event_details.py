"""What the engine's events tell beyond the cards, in every rule set: whether a
laying was the seat's opening and what it counted towards the threshold, how
many reshuffles the round has had, whether a round's scores were doubled, and
each seat's total after every round (kept in the state's results too)."""

from __future__ import annotations

from services.game.rules import Phase, TableOptions
from services.game.rules.events import Melded, Reshuffled, RoundEnded

from .helpers import Table
from .test_classic import LONER as CLASSIC_LONER
from .test_classic import LONER_B, classic
from .test_classic import RAMI as CLASSIC_RAMI
from .test_classic_opening import OPENER
from .test_classic_scoring import CHEAP, HEAVY, open_then_out, out_at_once
from .test_contract import GROUPS, contract
from .test_contract import LONER as CONTRACT_LONER
from .test_rami51 import LONER, OPENINGS, RAMI, rami51
from .test_rami51_opening import LOW
from .test_rami51_scoring import blocked_deal, go_out_at_once, play_seed_deal
from .test_reshuffle import HAND_A, HAND_B, draw_and_throw


def melded(table: Table) -> Melded:
    return next(e for e in table.events if isinstance(e, Melded))


def round_ended(table: Table) -> RoundEnded:
    return next(e for e in table.log[::-1] if isinstance(e, RoundEnded))


# --- Melded: the opening --------------------------------------------------------------


def test_melded_tells_a_rami51_opening_and_its_points_then_later_layings_are_not() -> None:
    table = rami51([OPENINGS, LONER], stock="6D 7D 8D", opening_threshold=51)
    table.draw(0)
    table.meld(0, "TS JS QS", "9H 9C 9D")  # seed 000: 30 + 27
    assert (melded(table).opened, melded(table).opening_points) == (True, 57)
    table.discard(0, "6D")
    table.draw_and_throw(1)
    table.draw(0)
    table.meld(0, "KS KH KD")
    assert (melded(table).opened, melded(table).opening_points) == (False, 0)


def test_melded_counts_the_points_of_a_rami51_opening_exempt_from_the_threshold() -> None:
    table = rami51([LOW, LONER], stock="3C", opening_threshold=51)
    table.draw(0)
    table.meld(0, "AS 2S 3S 4S", "AH 2H 3H", "AD 2D 3D", "AC 2C 3C")  # leaves KC
    assert (melded(table).opened, melded(table).opening_points) == (True, 28)


def test_melded_tells_a_classic_opening_of_51() -> None:
    table = classic([OPENER, CLASSIC_LONER], stock="9H")
    table.draw(0)
    table.meld(0, "TS JS QS", "7H 7D 7C")
    assert (melded(table).opened, melded(table).opening_points) == (True, 51)


def test_melded_tells_openings_without_a_points_threshold_and_counts_none() -> None:
    cafe = Table(
        ["7S 7H JK 4C 5C 6C AH 3C 5D 9D JC KH 2S", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
        "KD",
        "2D",
    )
    cafe.draw(0)
    cafe.meld(0, "4C 5C 6C")
    assert (melded(cafe).opened, melded(cafe).opening_points) == (True, 0)
    cafe.meld(0, "7S 7H JK")
    assert (melded(cafe).opened, melded(cafe).opening_points) == (False, 0)
    table = contract([GROUPS, CONTRACT_LONER], stock="9H")
    table.draw(0)
    table.meld(0, "7S 7S 7D", "KH KH KC")  # the deal's contract, not a threshold
    assert (melded(table).opened, melded(table).opening_points) == (True, 0)
    table.meld(0, "2C 3C 4C")
    assert (melded(table).opened, melded(table).opening_points) == (False, 0)


# --- Reshuffled: the count ------------------------------------------------------------


def reshuffle_once(table: Table) -> Reshuffled:
    """Draw and throw until the stock is rebuilt; the reshuffle it made."""
    for _ in range(200):
        before = len(table.log)
        draw_and_throw(table)
        made = [e for e in table.log[before:] if isinstance(e, Reshuffled)]
        if made:
            return made[0]
    raise AssertionError("the stock was never rebuilt")


def test_reshuffled_counts_the_reshuffles_of_the_round_and_starts_again_next_round() -> None:
    options = TableOptions(turn_cap=300, rounds=2)
    table = Table([HAND_A, HAND_B], "JK", options=options, seed=5)
    assert [reshuffle_once(table).count for _ in range(3)] == [1, 2, 3]
    assert table.state.reshuffles == 3
    while table.state.phase != Phase.DEAL:
        table.timeout()
    table.deal([HAND_A, HAND_B], "JK", seed=6)
    assert reshuffle_once(table).count == 1


def test_reshuffled_counts_up_to_rami51s_limit_of_two() -> None:
    table = blocked_deal(["KS 9H 6D", "TH 7S", "KH 8S 6H"])
    assert [e.count for e in table.log if isinstance(e, Reshuffled)] == [1, 2]


# --- RoundEnded: doubled --------------------------------------------------------------


def test_round_ended_is_doubled_for_a_rami51_rami_d_un_coup_only() -> None:
    assert round_ended(play_seed_deal(winner_opens_first=False)).doubled
    assert not round_ended(play_seed_deal(winner_opens_first=True)).doubled
    blocked = round_ended(blocked_deal(["KS 9H 6D", "TH 7S", "KH 8S 6H"]))
    assert not blocked.doubled


def test_round_ended_is_doubled_for_a_classic_rami_sec_only() -> None:
    at_once = classic([CLASSIC_RAMI, CLASSIC_LONER], stock="5D")
    out_at_once(at_once, 0)
    assert round_ended(at_once).doubled and round_ended(at_once).penalties[0] == -20
    in_two = classic([CLASSIC_RAMI, CLASSIC_LONER, LONER_B], stock="5D 6H 7D 8H")
    open_then_out(in_two, 0, [1, 2])
    assert not round_ended(in_two).doubled and round_ended(in_two).penalties[0] == -10


def test_round_ended_is_never_doubled_in_cafe() -> None:
    # Out in a turn begun without having opened: cafe scores it as any other round.
    table = Table(
        ["7S 8S 9S QD QH QC 2D 3D 4D 5C 6C 7C KH", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
        "KD",
        "8C",
        options=TableOptions(rounds=1),
    )
    table.draw(0)
    table.meld(0, "7S 8S 9S", "QD QH QC", "2D 3D 4D", "5C 6C 7C 8C")
    table.discard(0, "KH")
    assert round_ended(table).reason == "went_out" and not round_ended(table).doubled
    assert not table.state.results[0].doubled


# --- the rounds played: each round's totals -------------------------------------------


def three_deals_to_200() -> Table:
    """A `rami51` game to 200 over three deals, each won at once (doubled): the
    totals are 188/0, then 188/188, then 376/188."""
    table = rami51([RAMI, LONER], stock="KS", target_score=200)
    go_out_at_once(table, 0)
    table.deal([LONER, RAMI], "KD", "KS")
    go_out_at_once(table, 1)
    table.deal([RAMI, LONER], "KD", "KS")
    go_out_at_once(table, 0)
    return table


def test_results_keep_each_seats_totals_after_every_round() -> None:
    table = three_deals_to_200()
    results = table.state.results
    assert [r.totals for r in results] == [(188, 0), (188, 188), (376, 188)]
    assert all(r.doubled for r in results)
    ended = [e for e in table.log if isinstance(e, RoundEnded)]
    assert [(e.totals, e.doubled) for e in ended] == [(r.totals, r.doubled) for r in results]


def test_results_keep_the_totals_a_round_left_before_any_buy_back() -> None:
    table = classic([CLASSIC_RAMI, CHEAP, HEAVY], stock="5D 6H 7D 8H", buy_backs=1)
    open_then_out(table, 0, [1, 2])
    assert table.state.results[0].totals == (-10, 54, 142) == round_ended(table).totals
    assert table.state.totals == [-10, 54, 54], "seat 2 bought back in at 54"
