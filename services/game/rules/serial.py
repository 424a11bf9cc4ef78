"""A table's state as bytes (it lives in a PostgreSQL row) and back, losslessly.

Compact JSON with a format version, readable in a database shell: every value
under its `GameState` name, but the melds and the round results, which repeat,
are lists in the order `records` gives (the event log stores its melds with the
same codec). orjson writes a dealt four-seat state in a few microseconds and
reads it in about twenty (the standard library's json takes several times
longer), and every action writes one.

States stored in the first format, which kept the turn's values and the options
by position too, are read by `serial_v1`; a state is always written in the newest.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson

from . import serial_v1
from .events import EndReason
from .records import meld_from_record, meld_record, result_record, results_from_records
from .ruleset import Contract, TableOptions, preset
from .state import GameState, Phase, SeatStatus

FORMAT_VERSION = 2
"""2: the values by name, melds and round results as records. 1 (read only): the
turn's values and the options as lists too, by position."""


class StateFormatError(ValueError):
    """Bytes that are not a state this version of the engine can read."""


# --- writing -------------------------------------------------------------------


def _options_doc(options: TableOptions) -> dict[str, Any]:
    return {
        "turn_timer_ms": options.turn_timer_ms,
        "turn_cap": options.turn_cap,
        "rounds": options.rounds,
        "elimination_cap": options.elimination_cap,
        "opening_threshold": options.opening_threshold,
        "target_score": options.target_score,
        "buy_backs": options.buy_backs,
        "claim_window_ms": options.claim_window_ms,
        "contracts": [
            {"groups": c.groups, "runs": c.runs, "no_final_discard": c.no_final_discard}
            for c in options.contracts
        ],
    }


def dumps(state: GameState) -> bytes:
    return orjson.dumps(
        {
            "v": FORMAT_VERSION,
            "ruleset": state.ruleset.name,
            "options": _options_doc(state.options),
            "seats": state.seats,
            "hands": state.hands,
            "stock": state.stock,
            "discard": state.discard,
            "melds": [meld_record(m) for m in state.melds],
            "opened": state.opened,
            "totals": state.totals,
            "status": state.status,
            "phase": state.phase,
            "round_no": state.round_no,
            "dealer": state.dealer,
            "current": state.current,
            "turn": state.turn,
            "deadline_ms": state.deadline_ms,
            "taken_discard": state.taken_discard,
            "drawn": state.drawn,
            "next_meld_id": state.next_meld_id,
            "reshuffles": state.reshuffles,
            "seed": state.seed,
            "winner": state.winner,
            "results": [result_record(r) for r in state.results],
            "began_opened": state.began_opened,
            "moved": state.moved,
            "taken_used": state.taken_used,
            "reposed": state.reposed,
            "claim_card": state.claim_card,
            "claim_deadline_ms": state.claim_deadline_ms,
            "claimants": state.claimants,
            "top_discarder": state.top_discarder,
            "buy_backs": state.buy_backs,
            "deal_order": state.deal_order,
            "deal_salt": state.deal_salt,
            "end_reason": state.end_reason,
            "end_note": state.end_note,
            "resumed_ms": state.resumed_ms,
        }
    )


# --- reading -------------------------------------------------------------------


def _options(doc: dict[str, Any]) -> TableOptions:
    contracts = tuple(
        Contract(c["groups"], c["runs"], bool(c["no_final_discard"])) for c in doc["contracts"]
    )
    plain = TableOptions(
        turn_timer_ms=doc["turn_timer_ms"],
        turn_cap=doc["turn_cap"],
        rounds=doc["rounds"],
        elimination_cap=doc["elimination_cap"],
        opening_threshold=doc["opening_threshold"],
        target_score=doc["target_score"],
        buy_backs=doc["buy_backs"],
        claim_window_ms=doc["claim_window_ms"],
    )
    return replace(plain, contracts=contracts)


def _state(doc: dict[str, Any]) -> GameState:
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
        phase=Phase(doc["phase"]),
        round_no=doc["round_no"],
        dealer=doc["dealer"],
        current=doc["current"],
        turn=doc["turn"],
        deadline_ms=doc["deadline_ms"],
        taken_discard=doc["taken_discard"],
        drawn=doc["drawn"],
        next_meld_id=doc["next_meld_id"],
        reshuffles=doc["reshuffles"],
        seed=doc["seed"],
        winner=doc["winner"],
        results=results_from_records(doc["results"]),
        began_opened=doc["began_opened"],
        moved=doc["moved"],
        taken_used=doc["taken_used"],
        reposed=doc["reposed"],
        claim_card=doc["claim_card"],
        claim_deadline_ms=doc["claim_deadline_ms"],
        claimants=doc["claimants"],
        top_discarder=doc["top_discarder"],
        buy_backs=doc["buy_backs"],
        deal_order=tuple(doc["deal_order"]),
        deal_salt=doc["deal_salt"],
        end_reason=EndReason(doc["end_reason"]).value if doc["end_reason"] else "",
        # Absent from the states stored before it was kept.
        end_note=doc.get("end_note", ""),
        resumed_ms=doc["resumed_ms"],
    )


def _ints(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(x, int) for x in value)


def _checked(state: GameState) -> GameState:
    """``state``, if its fields have the shapes the engine relies on: a damaged
    document is refused here rather than failing somewhere in a later move."""
    n = state.seats
    scalars = (
        state.round_no, state.dealer, state.current, state.turn, state.deadline_ms,
        state.taken_discard, state.drawn, state.next_meld_id, state.reshuffles, state.seed,
        state.winner, state.claim_card, state.claim_deadline_ms, state.resumed_ms,
        state.top_discarder,
    )  # fmt: skip
    flags = (state.began_opened, state.moved, state.taken_used, state.reposed)
    well_formed = (
        isinstance(n, int)
        and n > 0
        and isinstance(state.hands, list)
        and len(state.hands) == n
        and all(_ints(h) for h in state.hands)
        and all(_ints(v) for v in (state.stock, state.discard, state.totals))
        and all(_ints(v) for v in (state.claimants, state.buy_backs))
        and isinstance(state.opened, list)
        and all(isinstance(o, int) for o in state.opened)
        and len(state.opened) == len(state.totals) == len(state.status) == n
        and all(isinstance(v, int) for v in (*scalars, *flags))
        and all(isinstance(c, int) for m in state.melds for c in m.cards)
        and all(isinstance(c, int) for c in state.deal_order)
        and isinstance(state.deal_salt, str)
        and isinstance(state.end_note, str)
        and all(
            len(r.penalties) == len(r.totals) == n
            and all(isinstance(v, int) for v in (*r.penalties, *r.totals, r.doubled))
            and len(r.hands) in (0, n)
            and all(isinstance(c, int) for h in r.hands for c in h)
            for r in state.results
        )
    )
    if not well_formed:
        raise StateFormatError("not a table state: a field has the wrong shape")
    return state


def loads(data: bytes) -> GameState:
    try:
        doc = orjson.loads(data)
        if not isinstance(doc, dict):
            raise StateFormatError("not a table state: not a JSON object")
        version = doc.get("v")
        if version == FORMAT_VERSION:
            return _checked(_state(doc))
        if version == serial_v1.VERSION:
            return _checked(serial_v1.state(doc))
        raise StateFormatError(f"state format {version} is not one this engine reads")
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        if isinstance(error, StateFormatError):
            raise
        raise StateFormatError(f"not a table state: {error}") from error
