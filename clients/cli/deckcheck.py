"""Checks every round's deck against the commitment the table showed at the deal:
as a game goes (`DeckCheck`), or all of a finished game's at once (`check_deals`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.common.pb.rummy.v1 import player_pb2, table_pb2
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


@dataclass(frozen=True, slots=True)
class DealResult:
    """Whether a deal's revealed deck opens the commitment shown before it was dealt."""

    round: int
    verified: bool
    problem: str = ""
    """Why not, in words ('' when verified)."""


def check_deals(
    deals: Sequence[player_pb2.DealCheck], events: Sequence[table_pb2.TableEvent]
) -> list[DealResult]:
    """Each deal of a replay checked: its reveal against its commitment, and that
    commitment against the one the log's deal showed. A round dealt in the log with
    no commitment sent fails too."""
    shown = {e.dealt.round: e.dealt.deck_commitment for e in events if e.HasField("dealt")}
    results = []
    for deal in deals:
        problem = ""
        if not deal.HasField("revealed"):
            problem = "its deck was never revealed"
        elif shown.get(deal.round, deal.deck_commitment) != deal.deck_commitment:
            problem = "its commitment is not the one shown at the deal"
        else:
            deck = deal.revealed
            if not verify_deck(deck.order, deck.seed, deck.salt, deal.deck_commitment):
                problem = "the revealed deck does not match the commitment"
        results.append(DealResult(deal.round, not problem, problem))
    checked = {d.round for d in deals}
    results += [
        DealResult(n, False, "no commitment came with the replay")
        for n in sorted(shown)
        if n not in checked
    ]
    return sorted(results, key=lambda r: r.round)


def shuffles_text(results: Sequence[DealResult]) -> str:
    """`every shuffle verifies`, or which deals do not."""
    failed = [r.round for r in results if not r.verified]
    if not results:
        return "no shuffle to check"
    if not failed:
        return "every shuffle verifies"
    if len(failed) == 1:
        return f"round {failed[0]}'s shuffle does NOT verify"
    return f"the shuffles of rounds {', '.join(map(str, failed))} do NOT verify"
