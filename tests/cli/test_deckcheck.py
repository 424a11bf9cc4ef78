"""The client checks each revealed deck against the commitment shown at the deal."""

from __future__ import annotations

from clients.cli.deckcheck import DeckCheck
from services.common.pb.rummy.v1 import table_pb2
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
