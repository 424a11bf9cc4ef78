"""Melds and round results as stored: each a JSON list of its values, in a fixed order.

A state holds every meld on the table and every round played, and every move
rewrites the whole state, so these repeated records name their values here,
once, rather than in each copy: named in each, they added about half again to a
mid-game state, past the 2 KB beyond which PostgreSQL compresses a row on every
write. The table state (`serial`) and the event log (`services/game/eventlog.py`)
store their melds with this one codec.
"""

from __future__ import annotations

from typing import Any

from .melds import MeldKind, TableMeld
from .state import RoundResult


def meld_record(meld: TableMeld) -> list[Any]:
    """``[id, owner, kind, cards, rank, suit, joker_suits]`` (orjson writes the
    tuples as lists)."""
    return [
        meld.id,
        meld.owner,
        int(meld.kind),
        meld.cards,
        meld.rank,
        meld.suit,
        meld.joker_suits,
    ]


def meld_from_record(values: list[Any]) -> TableMeld:
    return TableMeld(
        id=values[0],
        owner=values[1],
        kind=MeldKind(values[2]),
        cards=tuple(values[3]),
        rank=values[4],
        suit=values[5],
        joker_suits=tuple((joker, suit) for joker, suit in values[6]),
    )


def result_record(result: RoundResult) -> list[Any]:
    """``[round_no, winner, reason, penalties, totals, doubled, hands]``."""
    return [
        result.round_no,
        result.winner,
        result.reason,
        result.penalties,
        result.totals,
        result.doubled,
        result.hands,
    ]


def results_from_records(records: list[list[Any]]) -> list[RoundResult]:
    """The rounds played. States stored before the totals and the doubling were
    kept hold only the first four values: each round's totals are then the
    penalties summed up to it (exact unless a `classic` buy-back reset a total
    since the game began), and the round counts as not doubled (the stored points
    were right either way). States stored before the hands left were kept hold
    six: those are unknown (())."""
    results = []
    running: list[int] = []
    for record in records:
        penalties = tuple(record[3])
        running = [t + p for t, p in zip(running or [0] * len(penalties), penalties, strict=True)]
        older = len(record) == 4
        totals = tuple(running) if older else tuple(record[4])
        running = list(totals)
        results.append(
            RoundResult(
                round_no=record[0],
                winner=record[1],
                reason=record[2],
                penalties=penalties,
                totals=totals,
                doubled=False if older else record[5],
                hands=tuple(tuple(hand) for hand in record[6]) if len(record) > 6 else (),
            )
        )
    return results
