"""Joker swaps: RULES.md §2 row `joker swap` and the decisions on swap atomicity,
the joker in a group, and the swap in a 4-card group."""

from __future__ import annotations

from dataclasses import replace

from services.game.rules import Discard, LayOff, Meld, MeldSpec, Reason, Side, SwapJoker
from services.game.rules.events import JokerSwapped, LaidOff, Melded
from services.game.rules.melds import MeldKind

from .helpers import Table, assert_conserved

RUN_OWNER = "8S 9S JK 7S AH 3C 5D 9D JC KH 2S 4H 6C"
SWAPPER = "TS 7S QH QC 4D 5D 6D 2C 8H JD AS 3H KC"


def run_table() -> Table:
    """Seat 0 has laid 8S 9S JK (the joker is TS); seat 1 holds TS and has drawn."""
    table = Table([RUN_OWNER, SWAPPER], "KD", "2D 7D")
    table.draw(0)
    table.meld(0, "8S 9S JK")
    table.discard(0, "KH")
    table.draw(1)
    return table


def test_joker_swap_only_after_opening() -> None:
    table = run_table()
    swap = table.swap(1, 1, "TS", new_meld="QH QC JK")
    assert table.refuse(1, swap).reason == Reason.NOT_OPENED
    table.meld(1, "4D 5D 6D")
    table.act(1, swap)
    assert table.meld_codes(1) == "8S 9S TS"


def test_joker_swap_needs_the_exact_card_the_joker_stands_for() -> None:
    table = run_table()
    table.meld(1, "4D 5D 6D")
    # 8S 9S JK: the joker is the TS, not the 7S (that would be JK 8S 9S).
    wrong = table.swap(1, 1, "7S", new_meld="QH QC JK")
    assert table.refuse(1, wrong).reason == Reason.SWAP_INVALID
    not_a_joker = SwapJoker(1, table.table_meld(1).cards[0], table.card(1, "TS"))
    assert table.refuse(1, not_a_joker).reason == Reason.SWAP_INVALID


def test_joker_swap_retrieved_joker_remelded_in_the_same_action_new_meld() -> None:
    table = run_table()
    table.meld(1, "4D 5D 6D")
    joker = table.joker_of(1)
    events = table.act(1, table.swap(1, 1, "TS", new_meld="QH QC JK"))
    swapped, melded = events
    assert isinstance(swapped, JokerSwapped) and swapped.joker == joker
    assert isinstance(melded, Melded) and joker in melded.melds[0].cards
    assert swapped.placed_in == melded.melds[0], "the swap says where the joker went"
    assert table.meld_codes(1) == "8S 9S TS"
    assert table.meld_codes(3) == "QH QC JK"
    assert joker not in table.state.hands[1]
    assert table.hand(1) == "AS 7S 3H 8H 7D JD 2C KC"
    assert_conserved(table.state)


def test_joker_swap_retrieved_joker_laid_off_in_the_same_action() -> None:
    table = run_table()
    table.meld(1, "4D 5D 6D")
    events = table.act(1, table.swap(1, 1, "TS", lay_off=2, side=Side.HIGH))
    assert isinstance(events[1], LaidOff)
    assert table.meld_codes(2) == "4D 5D 6D JK"
    swapped = events[0]
    assert isinstance(swapped, JokerSwapped)
    assert swapped.placed_in == events[1].meld == table.table_meld(2), "the meld after the lay-off"
    assert table.meld_codes(1) == "8S 9S TS"


def test_swap_atomicity_decision_the_joker_must_be_placed_in_the_same_action() -> None:
    table = run_table()
    table.meld(1, "4D 5D 6D")
    joker, ts = table.joker_of(1), table.card(1, "TS")
    bare = SwapJoker(1, joker, ts)
    assert table.refuse(1, bare).reason == Reason.SWAP_JOKER_NOT_PLACED
    elsewhere = SwapJoker(1, joker, ts, new_meld=MeldSpec(table.cards(1, "QH QC 8H")))
    assert table.refuse(1, elsewhere).reason == Reason.SWAP_JOKER_NOT_PLACED
    both = SwapJoker(
        1,
        joker,
        ts,
        new_meld=MeldSpec((*table.cards(1, "QH QC"), joker)),
        lay_off=LayOff(2, (joker,)),
    )
    assert table.refuse(1, both).reason == Reason.SWAP_INVALID
    bad_meld = table.swap(1, 1, "TS", new_meld="QH 2C JK")
    assert table.refuse(1, bad_meld).reason == Reason.MELD_INVALID
    # Laying the joker back on the very meld it left (now 8S 9S TS, as a JS) is a
    # placement like any other.
    table.act(1, table.swap(1, 1, "TS", lay_off=1, side=Side.HIGH))
    assert table.meld_codes(1) == "8S 9S TS JK"


def test_a_joker_laid_off_on_a_run_names_its_end_when_it_fits_both() -> None:
    table = run_table()
    table.meld(1, "4D 5D 6D")
    # On 4D 5D 6D the joker could be the 3D or the 7D: the player says which.
    anywhere = table.swap(1, 1, "TS", lay_off=2)
    refusal = table.refuse(1, anywhere)
    assert refusal.reason == Reason.LAY_OFF_AMBIGUOUS and "low or high" in refusal.message
    table.act(1, table.swap(1, 1, "TS", lay_off=2, side=Side.LOW))
    assert table.meld_codes(2) == "JK 4D 5D 6D"


def test_a_card_laid_off_where_only_one_end_takes_it_needs_no_side() -> None:
    table = Table(["QS KS AS JK 5C 9D 2H 3H 4H 6C 7C 8C TD", SWAPPER], "KD", "2D 7D")
    table.draw(0)
    table.meld(0, "QS KS AS", "2H 3H 4H")
    # Nothing goes above the ace: the joker is the JS.
    table.lay_off(0, 1, "JK")
    assert table.meld_codes(1) == "JK QS KS AS"
    assert table.refuse(0, LayOff(2, table.cards(0, "5C"))).reason == Reason.LAY_OFF_INVALID


def test_retrieved_joker_never_reaches_the_hand_so_it_cannot_be_discarded() -> None:
    table = run_table()
    table.meld(1, "4D 5D 6D")
    joker = table.joker_of(1)
    table.act(1, table.swap(1, 1, "TS", new_meld="QH QC JK"))
    refusal = table.refuse(1, Meld((MeldSpec((joker,)),)))
    assert refusal.reason in (Reason.CARD_NOT_IN_HAND, Reason.MELD_TOO_SHORT)
    assert table.refuse(1, Discard(joker)).reason == Reason.CARD_NOT_IN_HAND


def test_joker_swap_may_not_empty_the_hand() -> None:
    hand = "TS 4D 5D 6D 2C 3C 4C 7H 8H 9H JS QS KS"
    table = Table([RUN_OWNER, hand], "KD", "2D 7D")
    table.draw(0)
    table.meld(0, "8S 9S JK")
    table.discard(0, "KH")
    table.draw(1)  # 7D
    table.meld(1, "4D 5D 6D", "2C 3C 4C", "7H 8H 9H", "JS QS KS")
    table.lay_off(1, 2, "7D")
    assert table.hand(1) == "TS"
    swap = table.swap(1, 1, "TS", lay_off=2, side=Side.HIGH)
    assert table.refuse(1, swap).reason == Reason.MUST_KEEP_CARD


# --- the joker in a group ----------------------------------------------------------

GROUP_OWNER = "7S 7H JK 7D AH 3C 5D 9D JC KH 2S 4H 6C"
GROUP_SWAPPER = "7D 7C 7S QH QC 4D 5D 6D 8H JD AS 3H KC"


def group_table(group: str, named_suit: int | None = None) -> Table:
    """Seat 0 lays ``group`` (naming the joker's suit if asked); seat 1 opens."""
    table = Table([GROUP_OWNER, GROUP_SWAPPER], "KD", "2D 9C")
    table.draw(0)
    cards = table.cards(0, group)
    joker = next(c for c in cards if table.deck.is_joker(c))
    named = ((joker, named_suit),) if named_suit is not None else ()
    table.act(0, Meld((MeldSpec(cards, named),)))
    table.discard(0, "KH")
    table.draw(1)
    table.meld(1, "4D 5D 6D")
    return table


def test_group_joker_decision_unnamed_stands_for_either_missing_suit() -> None:
    for replacement in ("7D", "7C"):
        table = group_table("7S 7H JK")
        table.act(1, table.swap(1, 1, replacement, new_meld="QH QC JK"))
        assert sorted(table.meld_codes(1).split()) == sorted(f"7S 7H {replacement}".split())
    table = group_table("7S 7H JK")
    # A suit already in the group is no replacement (7S is the second copy).
    assert table.refuse(1, table.swap(1, 1, "7S", new_meld="QH QC JK")).reason == (
        Reason.SWAP_INVALID
    )


def test_group_joker_decision_a_named_suit_is_the_only_replacement() -> None:
    table = group_table("7S 7H JK", named_suit=2)  # diamonds
    refusal = table.refuse(1, table.swap(1, 1, "7C", new_meld="QH QC JK"))
    assert refusal.reason == Reason.SWAP_INVALID
    table.act(1, table.swap(1, 1, "7D", new_meld="QH QC JK"))
    assert table.table_meld(1).joker_suits == ()


def test_group_joker_named_suit_blocks_a_lay_off_of_that_suit() -> None:
    table = group_table("7S 7H JK", named_suit=2)
    assert table.refuse(1, LayOff(1, table.cards(1, "7D"))).reason == Reason.LAY_OFF_INVALID
    table.lay_off(1, 1, "7C")
    assert sorted(table.meld_codes(1).split()) == ["7C", "7H", "7S", "JK"]


def test_swap_in_a_four_card_group_only_the_one_missing_suit() -> None:
    table = group_table("7S 7H 7D JK")
    refusal = table.refuse(1, table.swap(1, 1, "7S", new_meld="QH QC JK"))
    assert refusal.reason == Reason.SWAP_INVALID
    refusal = table.refuse(1, table.swap(1, 1, "7D", new_meld="QH QC JK"))
    assert refusal.reason == Reason.SWAP_INVALID
    table.act(1, table.swap(1, 1, "7C", new_meld="QH QC JK"))
    assert sorted(table.meld_codes(1).split()) == ["7C", "7D", "7H", "7S"]
    assert_conserved(table.state)


def test_swap_placing_the_retrieved_joker_twice_is_refused() -> None:
    # One physical joker cannot go down twice: not in a new meld, not in a lay-off.
    for placed in ("new meld", "lay-off"):
        table = run_table()
        table.meld(1, "4D 5D 6D")
        joker, ts = table.joker_of(1), table.card(1, "TS")
        if placed == "new meld":
            twice = SwapJoker(
                1, joker, ts, new_meld=MeldSpec((*table.cards(1, "QH QC"), joker, joker))
            )
        else:
            twice = SwapJoker(1, joker, ts, lay_off=LayOff(2, (joker, joker)))
        assert table.refuse(1, twice).reason == Reason.CARD_DUPLICATED
        assert_conserved(table.state)


def test_swap_new_meld_of_a_named_kind() -> None:
    table = run_table()
    table.meld(1, "4D 5D 6D")
    as_run = table.swap(1, 1, "TS", new_meld="QH QC JK")
    assert as_run.new_meld is not None
    wrong = replace(as_run, new_meld=replace(as_run.new_meld, kind=MeldKind.RUN))
    assert table.refuse(1, wrong).reason == Reason.MELD_KIND_MISMATCH
    right = replace(as_run, new_meld=replace(as_run.new_meld, kind=MeldKind.GROUP))
    swapped, melded = table.act(1, right)
    assert isinstance(melded, Melded) and melded.melds[0].kind == MeldKind.GROUP
    assert isinstance(swapped, JokerSwapped) and swapped.placed_in == melded.melds[0]


def test_meld_of_a_named_kind() -> None:
    table = run_table()
    run = table.meld_action(1, "4D 5D 6D")
    as_group = Meld((replace(run.melds[0], kind=MeldKind.GROUP),))
    assert table.refuse(1, as_group).reason == Reason.MELD_KIND_MISMATCH
    (melded,) = table.act(1, Meld((replace(run.melds[0], kind=MeldKind.RUN),)))
    assert isinstance(melded, Melded) and melded.melds[0].kind == MeldKind.RUN
