"""The small public face of `services.game.rules` for client developers and tools:
parse a card, get a preset by name, validate a meld, a hand's penalty, the legal
actions of a seat."""

from __future__ import annotations

import pytest

import services.game.rules as rules
from services.game.rules import (
    PRESETS,
    Discard,
    DrawStock,
    LayOff,
    Meld,
    Reason,
    RuleError,
    Side,
    TakeDiscard,
    hand_penalty,
    legal_actions,
    parse_card,
    parse_cards,
    preset,
    validate_meld,
)

from .helpers import Table, codes

OPENER = "7S 8S 9S QD QH QC 2D 3D 4D 4C 5C 6C KS"
LONER = "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C"


def test_public_face_exports_what_it_documents() -> None:
    for name in rules.__all__:
        assert hasattr(rules, name), name


def test_preset_by_name_and_unknown_names_listed() -> None:
    assert preset("cafe") is PRESETS["cafe"]
    assert preset("cafe").deck.size == 110
    with pytest.raises(KeyError, match="cafe"):
        preset("poker")


def test_parse_validate_and_penalty_from_the_public_face() -> None:
    cafe = preset("cafe")
    assert codes([parse_card("TS", cafe)]) == "TS"
    shape = validate_meld(parse_cards("8S 9S JK", cafe), cafe)
    assert shape.rank == 8
    with pytest.raises(RuleError) as caught:
        validate_meld(parse_cards("KC AC 2C", cafe), cafe)
    assert caught.value.reason == Reason.MELD_INVALID
    assert hand_penalty(parse_cards("KS QH JC AD", cafe), cafe) == 41


def test_legal_actions_before_the_draw_are_the_two_piles() -> None:
    table = Table([OPENER, LONER], "KH")
    assert legal_actions(table.state, 0) == [DrawStock(), TakeDiscard()]
    assert legal_actions(table.state, 1) == [], "not seat 1's turn"


def test_legal_actions_after_the_draw_every_meld_lay_off_and_discard() -> None:
    table = Table([OPENER, LONER], "KH", "TS")
    table.draw(0)
    moves = legal_actions(table.state, 0)
    melds = {codes(m.melds[0].cards) for m in moves if isinstance(m, Meld)}
    assert {"7S 8S 9S", "7S 8S 9S TS", "8S 9S TS", "2D 3D 4D", "4C 5C 6C"} <= melds
    assert {"QC QD QH"} <= {" ".join(sorted(m.split())) for m in melds}
    discards = [m.card for m in moves if isinstance(m, Discard)]
    assert sorted(discards) == sorted(table.state.hands[0])
    assert not any(isinstance(m, LayOff) for m in moves), "not opened yet"
    table.meld(0, "7S 8S 9S")
    moves = legal_actions(table.state, 0)
    lay_offs = [m for m in moves if isinstance(m, LayOff)]
    assert lay_offs == [LayOff(1, table.cards(0, "TS"), Side.HIGH)]
    for move in moves:
        rules.apply(table.state, 0, move, 0)  # every offered move is accepted


def test_legal_actions_never_offer_a_joker_discard_or_the_taken_card() -> None:
    table = Table(["JK 8S 9S QD QH QC 2D 3D 4D 4C 5C 6C KS", LONER], "KH")
    table.take(0)
    discards = {codes([m.card]) for m in legal_actions(table.state, 0) if isinstance(m, Discard)}
    assert "JK" not in discards and "KH" not in discards and "KS" in discards


def test_validate_meld_refuses_unknown_and_repeated_cards() -> None:
    cafe = preset("cafe")
    seven_s, seven_h, joker = parse_cards("7S 7H JK", cafe)
    with pytest.raises(RuleError) as caught:
        validate_meld([seven_s, seven_h, joker, joker], cafe)  # one joker named twice
    assert caught.value.reason == Reason.CARD_DUPLICATED
    with pytest.raises(RuleError) as caught:
        validate_meld([seven_s, seven_h, 110], cafe)
    assert caught.value.reason == Reason.CARD_UNKNOWN
