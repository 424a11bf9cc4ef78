"""States stored in the first format (`"v": 1`): read, never written.

That format kept the turn's scalars as one list (`"turn"`) and the options as a
list too, by position (its melds and round results are `records`, as now). Values
it gained over time were appended, so a shorter list is an older state: what it
lacks is read as unknown (see each default below). `serial` writes the named
format and reads this one through `state`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .events import EndReason
from .records import meld_from_record, results_from_records
from .ruleset import Contract, TableOptions, preset
from .state import GameState, Phase, SeatStatus

VERSION = 1


def _options(values: list[Any]) -> TableOptions:
    """``[turn_timer_ms, turn_cap, rounds, elimination_cap, opening_threshold,
    target_score, buy_backs, claim_window_ms, [[groups, runs, no_final_discard]...]]``."""
    *plain, contracts = values
    listed = tuple(Contract(g, r, bool(f)) for g, r, f in contracts)
    return replace(TableOptions(*plain), contracts=listed)


def state(doc: dict[str, Any]) -> GameState:
    """The state a first-format document holds (its shapes unchecked: the caller
    checks them, as for any format)."""
    t = doc["turn"]
    return GameState(
        ruleset=preset(doc["ruleset"]).for_seats(doc["seats"]),
        options=_options(doc["options"]),
        seats=doc["seats"],
        hands=doc["hands"],
        stock=doc["stock"],
        discard=doc["discard"],
        melds=[meld_from_record(m) for m in doc["melds"]],
        opened=doc["opened"],
        totals=doc["totals"],
        status=[SeatStatus(s) for s in doc["status"]],
        phase=Phase(t[0]),
        round_no=t[1],
        dealer=t[2],
        current=t[3],
        turn=t[4],
        deadline_ms=t[5],
        taken_discard=t[6],
        drawn=t[7],
        next_meld_id=t[8],
        reshuffles=t[9],
        seed=t[10],
        winner=t[11],
        results=results_from_records(doc["results"]),
        began_opened=t[12],
        moved=t[13],
        taken_used=t[14],
        reposed=t[15],
        claim_card=t[16],
        claim_deadline_ms=t[17],
        # States stored before the reason was kept have none.
        end_reason=EndReason(t[18]).value if len(t) > 18 and t[18] else "",
        # Nor had they a clock that ever stopped.
        resumed_ms=t[19] if len(t) > 19 else 0,
        # Nor who discarded the top card: anyone may claim it.
        top_discarder=t[20] if len(t) > 20 else -1,
        claimants=doc["claimants"],
        buy_backs=doc["buy_backs"],
        deal_order=tuple(doc["deal"][0]),
        deal_salt=doc["deal"][1],
    )
