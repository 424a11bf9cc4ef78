"""The client checks each revealed deck against the commitment shown at the deal."""

from __future__ import annotations

from clients.cli.deckcheck import DealResult, DeckCheck, check_deals, shuffles_text
from services.common.pb.rummy.v1 import player_pb2, table_pb2
from services.game.rules.fairness import commitment


def _events(order: list[int], seed: int, salt: bytes, shown: str) -> list[table_pb2.TableEvent]:
    dealt = table_pb2.TableEvent(dealt=table_pb2.Dealt(round=1, deck_commitment=shown))
    revealed = table_pb2.TableEvent(
        deck_revealed=table_pb2.DeckRevealed(round=1, order=order, seed=seed, salt=salt.hex())
    )
    return [dealt, revealed]


def test_a_revealed_deck_that_matches_its_commitment_is_verified() -> None:
    order, seed, salt = list(range(110)), 7, b"secret-salt-1234"
    check = DeckCheck()
    said = [check.see(e) for e in _events(order, seed, salt, commitment(order, seed, salt))]
    assert said[0] is None and said[1] is not None and "verified" in said[1]


def test_a_deck_changed_after_the_deal_is_flagged() -> None:
    order, seed, salt = list(range(110)), 7, b"secret-salt-1234"
    shown = commitment(order, seed, salt)
    swapped = [1, 0, *order[2:]]
    check = DeckCheck()
    said = [check.see(e) for e in _events(swapped, seed, salt, shown)]
    assert said[1] is not None and "does not match" in said[1]


def _deal(round_no: int, order: list[int], *, salt: bytes, shown: str = "") -> player_pb2.DealCheck:
    """A replay's deal check of ``order`` (seed 7), committed to unless ``shown``."""
    return player_pb2.DealCheck(
        round=round_no,
        deck_commitment=shown or commitment(order, 7, salt),
        revealed=table_pb2.DeckRevealed(round=round_no, order=order, seed=7, salt=salt.hex()),
    )


def _dealt(round_no: int, shown: str) -> table_pb2.TableEvent:
    return table_pb2.TableEvent(dealt=table_pb2.Dealt(round=round_no, deck_commitment=shown))


def test_every_deal_of_a_replay_is_checked_and_the_bad_ones_named() -> None:
    order, salt = list(range(110)), b"secret-salt-1234"
    good = [_deal(1, order, salt=salt), _deal(2, order[::-1], salt=salt)]
    events = [_dealt(d.round, d.deck_commitment) for d in good]
    checked = check_deals(good, events)
    assert [(c.round, c.verified) for c in checked] == [(1, True), (2, True)]
    assert shuffles_text(checked) == "every shuffle verifies"

    swapped = _deal(2, [1, 0, *order[2:]], salt=salt, shown=good[1].deck_commitment)
    checked = check_deals([good[0], swapped], events)
    assert checked[1] == DealResult(2, False, "the revealed deck does not match the commitment")
    assert shuffles_text(checked) == "round 2's shuffle does NOT verify"


def test_a_deal_without_reveal_or_with_another_commitment_fails() -> None:
    order, salt = list(range(110)), b"secret-salt-1234"
    unrevealed = player_pb2.DealCheck(round=1, deck_commitment=commitment(order, 7, salt))
    other = _deal(2, order, salt=salt)
    events = [_dealt(1, unrevealed.deck_commitment), _dealt(2, "0" * 64), _dealt(3, "1" * 64)]
    checked = check_deals([unrevealed, other], events)
    assert checked == [
        DealResult(1, False, "its deck was never revealed"),
        DealResult(2, False, "its commitment is not the one shown at the deal"),
        DealResult(3, False, "no commitment came with the replay"),
    ]
    assert shuffles_text(checked) == "the shuffles of rounds 1, 2, 3 do NOT verify"
    assert shuffles_text([]) == "no shuffle to check"
