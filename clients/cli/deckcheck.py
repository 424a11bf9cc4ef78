"""Checks every round's deck against the commitment the table showed at the deal."""

from __future__ import annotations

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules import verify_deck


class DeckCheck:
    """Remembers each deal's commitment; says whether the revealed deck matches it."""

    def __init__(self) -> None:
        self._commitments: dict[int, str] = {}

    def adopt(self, view: table_pb2.TableView) -> None:
        if view.deck_commitment and view.round:
            self._commitments.setdefault(view.round, view.deck_commitment)

    def see(self, event: table_pb2.TableEvent) -> str | None:
        kind = event.WhichOneof("payload")
        if kind == "dealt" and event.dealt.deck_commitment:
            self._commitments[event.dealt.round] = event.dealt.deck_commitment
            return None
        if kind != "deck_revealed":
            return None
        revealed = event.deck_revealed
        expected = self._commitments.get(revealed.round)
        if expected is None:
            return None  # joined after the deal: nothing to compare with
        if verify_deck(revealed.order, revealed.seed, revealed.salt, expected):
            return f"Round {revealed.round}: deck verified, it was fixed before the first card."
        return f"Round {revealed.round}: WARNING, the revealed deck does not match the deal!"
