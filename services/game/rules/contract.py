"""`contract` (rami contrat, Liverpool): does one action lay the deal's contract?"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import Reason, RuleError
from .melds import MeldKind, Shape
from .ruleset import CONTRACT_GROUP, CONTRACT_RUN, Contract


def run_units(runs: Sequence[Shape]) -> int:
    """Runs counted as the contract counts them: two runs of one suit that would
    join into one (3-6 then 7-T) count once; overlapping or gapped runs count twice.

    A run joins at most one run at each end, so the count is the number of runs
    less the most joins made at once (a matching of run ends to run starts): with
    3-6, 5-8 and 7-T, the 3-6 and the 7-T join and the 5-8 stands alone, two runs."""
    spans = [(r.suit, r.rank, r.rank + len(r.cards) - 1) for r in runs]
    after = [
        [j for j, (other, start, _) in enumerate(spans) if other == suit and start == end + 1]
        for suit, _, end in spans
    ]
    joined_to: dict[int, int] = {}  # run index -> index of the run it continues

    def join(i: int, seen: set[int]) -> bool:
        for j in after[i]:
            if j not in seen:
                seen.add(j)
                if j not in joined_to or join(joined_to[j], seen):
                    joined_to[j] = i
                    return True
        return False

    return len(spans) - sum(join(i, set()) for i in range(len(spans)))


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
        # Runs that join are worth a word only in a deal that asks for runs.
        joined = " (two runs of one suit that join count as one)" if contract.runs else ""
        raise RuleError(
            Reason.CONTRACT_UNMET, f"This deal's contract is {wanted}, laid all at once{joined}."
        )
    if contract.no_final_discard and left:
        raise RuleError(
            Reason.CONTRACT_UNMET,
            "In the last deal, go out by laying every card you hold in the three runs.",
        )
