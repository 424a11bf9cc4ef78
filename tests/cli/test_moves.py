"""Typed moves become requests naming the player's own cards by id."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from clients.cli import commands as C
from clients.cli.cards import CardError, Style, pick
from clients.cli.moves import MoveError, hint_text, request_for, swap_plan, swap_refused
from services.common.pb.rummy.v1 import cards_pb2, game_pb2, table_pb2

from .views import CAFE, Cards, sample_view

PLAIN = Style(colour=False)


def test_two_copies_of_a_card_are_two_distinct_ids() -> None:
    hand = Cards().many("7S 7S 8S")
    first, second = pick(hand, ["7s", "7♠"])
    assert first != second
    with pytest.raises(CardError, match="You have only 2 7♠"):
        pick(hand, ["7S", "7S", "7S"])
    with pytest.raises(CardError, match="You have no Q♦"):
        pick(hand, ["QD"])


def test_the_discard_avoids_the_copy_just_taken_from_the_pile() -> None:
    view = sample_view(hand="KS KS 2H")
    view.taken_discard_id = view.hand[0].id
    request = request_for(view, C.parse("x ks")).message
    assert isinstance(request, game_pb2.DiscardRequest)
    assert request.card_id == view.hand[1].id


def test_a_meld_request_keeps_the_typed_order_and_the_version_seen() -> None:
    view = sample_view(hand="9S JK TS 2H 3H 4H")
    request = request_for(view, C.parse("m 9S JK TS / 2h 3h 4h")).message
    assert isinstance(request, game_pb2.MeldRequest)
    codes = {c.id: c.code for c in view.hand}
    assert [[codes[i] for i in m.card_ids] for m in request.melds] == [
        ["9S", "JK", "TS"],
        ["2H", "3H", "4H"],
    ]
    assert request.expected_version == view.version


def test_a_lay_off_names_a_meld_on_the_table() -> None:
    view = sample_view()
    request = request_for(view, C.parse("l 3 7s")).message
    assert isinstance(request, game_pb2.LayOffRequest)
    assert request.meld_id == 3
    with pytest.raises(MoveError, match=r"no meld \[9\]"):
        request_for(view, C.parse("l 9 7S"))


def swap(typed: str) -> C.SwapCommand:
    command = C.parse(typed)
    assert isinstance(command, C.SwapCommand)
    return command


def _codes(view: table_pb2.TableView, ids: Iterable[int]) -> list[str]:
    codes = {c.id: c.code for c in view.hand}
    return [codes.get(i, "JK") for i in ids]


def test_the_player_chooses_where_a_swapped_joker_goes() -> None:
    """7♠ 8♠ JK on the table, 9♠ Q♥ Q♦ in hand: the joker could go back on the run,
    or into Q♥ Q♦ JK. Nothing is sent before the player says which."""
    view = sample_view(hand="9S QH QD 2C")
    del view.melds[1:]
    view.melds[0].cards.pop()  # 7♠ 8♠ JK
    plan = swap_plan(view, swap("s 1 9s"))
    assert [m for m, _ in plan.lay_offs] == [1]
    question = plan.question(view.hand)
    assert "it fits on [1]" in question and "a new meld" in question
    assert "keep" not in question, "cafe: a retrieved joker must be melded at once"

    meld = plan.placement("QH QD", view.hand).message
    assert isinstance(meld, game_pb2.SwapJokerRequest)
    assert meld.WhichOneof("placement") == "new_meld"
    assert _codes(view, meld.new_meld.card_ids) == ["QH", "QD", "JK"]
    assert _codes(view, meld.replacement_card_ids) == ["9S"]

    laid = plan.placement("1 high", view.hand).message
    assert isinstance(laid, game_pb2.SwapJokerRequest)
    assert laid.WhichOneof("placement") == "lay_off"
    assert laid.lay_off.meld_id == 1 and list(laid.lay_off.card_ids) == [plan.joker]
    assert laid.lay_off.side == game_pb2.SIDE_HIGH
    # Each answer builds its own request: the first one is untouched.
    assert meld.WhichOneof("placement") == "new_meld"
    with pytest.raises(MoveError, match="not a side"):
        plan.placement("1 up", view.hand)


def test_a_joker_that_fits_nowhere_is_placed_in_a_new_meld() -> None:
    view = sample_view(hand="9S 2C 3C KD")
    del view.melds[2]  # only the run with the joker and the full group are left
    view.melds[1].cards.add(id=CAFE.deck.ids_of("QC")[1], code="QC")  # four: no room for more
    plan = swap_plan(view, swap("s 1 9S"))
    if plan.lay_offs:  # the completed run 7♠ 8♠ 9♠ 10♠ may still take it at an end
        assert {m for m, _ in plan.lay_offs} == {1}
    assert sorted(_codes(view, plan.new_meld)) == ["2C", "3C", "JK"]
    assert plan.example(view.hand) in ("2C 3C JK", "JK 2C 3C")
    assert f"for example: {plan.example(view.hand)}" in plan.question(view.hand)
    message = plan.placement("2c jk 3c", view.hand).message
    assert isinstance(message, game_pb2.SwapJokerRequest)
    assert message.WhichOneof("placement") == "new_meld"
    assert _codes(view, message.new_meld.card_ids) == ["2C", "JK", "3C"]
    laid = plan.placement("[1]", view.hand).message
    assert isinstance(laid, game_pb2.SwapJokerRequest)
    assert laid.lay_off.meld_id == 1 and list(laid.lay_off.card_ids) == [plan.joker]
    with pytest.raises(MoveError, match="You have no 9♠"):
        plan.placement("9S JK", view.hand)  # the 9♠ goes into the run: not in hand any more


def test_classic_may_keep_the_joker_in_hand() -> None:
    view = sample_view(hand="9S 2C KD", ruleset="classic")
    view.seats[0].has_opened = True
    plan = swap_plan(view, swap("s 1 9s"))
    assert plan.may_keep and "k to keep it in hand" in plan.question(view.hand)
    kept = plan.placement("k", view.hand).message
    assert isinstance(kept, game_pb2.SwapJokerRequest)
    assert kept.WhichOneof("placement") is None
    assert _codes(view, kept.replacement_card_ids) == ["9S"]


def test_classic_before_the_opening_a_swapped_joker_can_only_stay_in_hand() -> None:
    """Seed 002: « tout joueur peut à son tour s'emparer » of a joker; before the
    opening nothing else is laid, so the player is only asked to take it."""
    view = sample_view(hand="9S 2C KD", ruleset="classic")
    assert not view.seats[0].has_opened
    plan = swap_plan(view, swap("s 1 9s"))
    assert plan.keep_only and not plan.lay_offs and not plan.new_meld
    question = plan.question(view.hand)
    assert "k to take it" in question and "lay it off" not in question
    kept = plan.placement("k", view.hand).message
    assert isinstance(kept, game_pb2.SwapJokerRequest)
    assert kept.WhichOneof("placement") is None


def test_classic_frees_a_brelan_joker_with_both_missing_cards() -> None:
    """Q♥ Q♦ JK: the joker comes out when Q♠ and Q♣ make the carré; both go in one request."""
    view = sample_view(hand="QS QC 5S KD", ruleset="classic")
    view.seats[0].has_opened = True
    plan = swap_plan(view, swap("s 2 qs qc"))
    joker = next(c.id for c in view.melds[1].cards if c.code == "JK")
    assert plan.request.joker_card_id == joker
    assert _codes(view, plan.request.replacement_card_ids) == ["QS", "QC"]
    # The carré is full and the run [1] has its one joker (classic): only [3] takes it.
    assert [m for m, _ in plan.lay_offs] == [3] and plan.may_keep
    kept = plan.placement("keep", view.hand).message
    assert isinstance(kept, game_pb2.SwapJokerRequest)
    assert list(kept.replacement_card_ids) == list(plan.request.replacement_card_ids)


def test_a_brelan_joker_named_as_one_suit_leaves_with_both_cards_in_either_order() -> None:
    """Q♥ Q♦ JK with its joker named Q♣ (another app can name it): Q♠ typed first
    is no reason to refuse, since Q♠ and Q♣ together free it."""
    view = sample_view(hand="QS QC 5S KD", ruleset="classic")
    joker = next(c.id for c in view.melds[1].cards if c.code == "JK")
    del view.melds[1].jokers[:]
    clubs = cards_pb2.SUIT_CLUBS
    view.melds[1].jokers.append(table_pb2.JokerRole(joker_card_id=joker, rank="Q", suit=clubs))
    plan = swap_plan(view, swap("s 2 qs qc"))
    assert plan.request.joker_card_id == joker
    assert _codes(view, plan.request.replacement_card_ids) == ["QS", "QC"]


def test_a_swap_for_a_card_no_joker_stands_for_is_refused_before_any_question() -> None:
    """Before, the player was asked where the joker goes; only then did the server refuse."""
    view = sample_view(hand="9H AD 2C")
    with pytest.raises(MoveError) as refused:
        swap_plan(view, swap("s 1 9h"))
    assert str(refused.value) == "The joker of [1] stands for 9♠, not 9♥."
    with pytest.raises(MoveError) as refused:
        swap_plan(view, swap("s 2 ad"))  # Q♥ Q♦ JK: either missing queen
    assert str(refused.value) == "The joker of [2] stands for Q♠ or Q♣, not A♦."


def test_a_meld_without_a_joker_cannot_be_swapped() -> None:
    with pytest.raises(MoveError, match=r"\[3\] has no joker"):
        swap_plan(sample_view(), C.SwapCommand(3, ("7H",)))


def test_a_claim_names_the_card_on_offer() -> None:
    view = sample_view(phase=table_pb2.PHASE_PLAY, current=1)
    view.ruleset = "contract"  # cafe's cards: only the rule set's name matters here
    with pytest.raises(MoveError, match="No discard is on offer"):
        view.ClearField("claim_window")
        request_for(view, C.parse("c"))
    offered = Cards()("QS")
    view.claim_window.card.CopyFrom(offered)
    request = request_for(view, C.parse("c")).message
    assert isinstance(request, game_pb2.ClaimRequest)
    assert request.card_id == offered.id


def test_a_claim_where_the_rules_have_none_says_so() -> None:
    """Before, `c` at a cafe table said that no discard was on offer, as if one could be."""
    for ruleset in ("cafe", "rami51", "classic"):
        view = sample_view(phase=table_pb2.PHASE_PLAY, current=1)
        view.ruleset = ruleset
        with pytest.raises(MoveError) as refused:
            request_for(view, C.parse("c"))
        assert str(refused.value) == (
            f"Claiming a discard is not in the {ruleset} rules: only contract has it."
        )


def test_a_swap_is_refused_at_once_when_no_swap_is_allowed_yet() -> None:
    """Checked before the player is asked where the joker goes, in the server's words."""
    view = sample_view(phase=table_pb2.PHASE_PLAY, current=1)
    view.seats[0].has_opened = True
    refused = swap_refused(view)
    assert refused is not None and refused.reason.value == "NOT_YOUR_TURN"
    assert refused.message == "It is not your turn."

    view = sample_view(phase=table_pb2.PHASE_DRAW)
    view.seats[0].has_opened = True
    refused = swap_refused(view)
    assert refused is not None and refused.reason.value == "MUST_DRAW_FIRST"

    view = sample_view(phase=table_pb2.PHASE_PLAY)
    refused = swap_refused(view)
    assert refused is not None and refused.reason.value == "NOT_OPENED"
    assert refused.message == "Lay down a meld of your own before you swap a joker."
    contract = sample_view(phase=table_pb2.PHASE_PLAY, hand="7S TS 2H 9S")
    del contract.melds[:]  # cafe's cards: only the rule set's name matters here
    contract.ruleset = "contract"
    refused = swap_refused(contract)
    assert refused is not None and "Lay down your contract" in refused.message

    view.seats[0].has_opened = True
    assert swap_refused(view) is None
    over = sample_view(phase=table_pb2.PHASE_GAME_OVER)
    refused = swap_refused(over)
    assert refused is not None and refused.reason.value == "GAME_OVER"


def test_a_hint_that_would_not_open_says_why_in_the_engines_words() -> None:
    view = sample_view(hand="7S 8S 9S 2H KH", ruleset="rami51")
    view.rules.opening_threshold = 40
    ids = [c.id for c in view.hand]
    hint = game_pb2.GetHintResponse(
        melds=[game_pb2.MeldSpec(card_ids=ids[:3])],
        opening_points=24,
        refusal_reason="TAKEN_CARD_UNUSED",
        refusal_message="Your opening must use the card you took from the discard pile.",
    )
    assert hint_text(view, hint, PLAIN) == (
        "Hint: 7♠ 8♠ 9♠ (24 points) — not yet: Your opening must use the card you took"
        " from the discard pile.\n  type: m 7S 8S 9S"
    )
    hint.opens, hint.refusal_message = True, ""
    assert hint_text(view, hint, PLAIN) == "Hint: 7♠ 8♠ 9♠ (24 points)\n  type: m 7S 8S 9S"
