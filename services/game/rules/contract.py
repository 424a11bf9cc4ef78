"""`contract` (rami contrat, Liverpool): does one action lay the deal's contract?"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import Reason, RuleError
from .melds import MeldKind, Shape
from .ruleset import CONTRACT_GROUP, CONTRACT_RUN, Contract


def run_units(runs: Sequence[Shape]) -> int:
    """Runs counted as the contract counts them: two runs of one suit that would
    join into one (3-6 then 7-T) count once; overlapping or gapped runs count twice."""
    units = 0
    ends: dict[int, list[tuple[int, int]]] = {}
    for run in sorted(runs, key=lambda r: (r.suit, r.rank)):
        spans = ends.setdefault(run.suit, [])
        start, end = run.rank, run.rank + len(run.cards) - 1
        if spans and spans[-1][1] + 1 == start:
            spans[-1] = (spans[-1][0], end)
            continue
        spans.append((start, end))
        units += 1
    return units


def check_contract(shapes: Sequence[Shape], contract: Contract, left: int) -> None:
    """Refuse unless ``shapes`` (laid in one action) are exactly the contract."""
    wanted = contract.describe()
    groups = [s for s in shapes if s.kind == MeldKind.GROUP]
    runs = [s for s in shapes if s.kind == MeldKind.RUN]
    if any(len(g.cards) < CONTRACT_GROUP for g in groups):
        raise RuleError(Reason.CONTRACT_UNMET, "A contract group has 3 or 4 cards.")
    if any(len(r.cards) < CONTRACT_RUN for r in runs):
        raise RuleError(Reason.CONTRACT_UNMET, "A contract run has at least 4 cards.")
    if len(groups) != contract.groups or run_units(runs) != contract.runs:
        raise RuleError(
            Reason.CONTRACT_UNMET,
            f"This deal's contract is {wanted}, laid all at once "
            "(two runs of one suit that join count as one).",
        )
    if contract.no_final_discard and left:
        raise RuleError(
            Reason.CONTRACT_UNMET,
            "In the last deal, go out by laying every card you hold in the three runs.",
        )
