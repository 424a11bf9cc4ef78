"""States stored in the first format (`"v": 1`): read, never written.

That format kept the turn's scalars as one list (`"turn"`) and the options, the
melds and the round results as lists too, each by position. Values it gained over
time were appended, so a shorter list is an older state: what it lacks is read as
unknown (see each default below). `serial` writes the named format and reads
this one through `state`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .events import EndReason
from .melds import Meld, MeldKind
from .ruleset import Contract, TableOptions, preset
from .state import GameState, Phase, RoundResult, SeatStatus

VERSION = 1


def meld(entry: list[Any]) -> Meld:
    """``[id, owner, kind, cards, rank, suit, joker_suits]``; the event log stored
    melds this way too, wrapped as ``{"meld": [...]}``."""
    return Meld(
        entry[0],
        entry[1],
        MeldKind(entry[2]),
        tuple(entry[3]),
        entry[4],
        entry[5],
        tuple((j, s) for j, s in entry[6]),
    )


def _options(values: list[Any]) -> TableOptions:
    """``[turn_timer_ms, turn_cap, rounds, elimination_cap, opening_threshold,
    target_score, buy_backs, claim_window_ms, [[groups, runs, no_final_discard]...]]``."""
    *plain, contracts = values
    listed = tuple(Contract(g, r, bool(f)) for g, r, f in contracts)
    return replace(TableOptions(*plain), contracts=listed)


def _results(entries: list[list[Any]]) -> list[RoundResult]:
    """The rounds played, from their documents: ``[round, winner, reason, penalties,
    totals, doubled, hands]``. States stored before the totals and the doubling were
    kept hold only the first four: each round's totals are then the penalties summed
    up to it (exact unless a `classic` buy-back reset a total since the game began),
    and the round counts as not doubled (the stored points were right either way).
    States stored before the hands left were kept hold six: those are unknown (())."""
    results = []
    running: list[int] = []
    for entry in entries:
        penalties = tuple(entry[3])
        running = [t + p for t, p in zip(running or [0] * len(penalties), penalties, strict=True)]
        older = len(entry) == 4
        totals = tuple(running) if older else tuple(entry[4])
        running = list(totals)
        doubled = False if older else entry[5]
        hands = tuple(tuple(h) for h in entry[6]) if len(entry) > 6 else ()
        results.append(RoundResult(entry[0], entry[1], entry[2], penalties, totals, doubled, hands))
    return results


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
        melds=[meld(m) for m in doc["melds"]],
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
        results=_results(doc["results"]),
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
