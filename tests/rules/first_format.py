"""The first state format's writer, as the engine ran it until format 2: kept here
to make first-format documents of any state, as the database still holds them.
`test_serial` checks it against documents that writer stored
(``golden/states_v1.jsonl``)."""

from __future__ import annotations

from typing import Any

import orjson

from services.game.rules.state import GameState


def document(state: GameState) -> dict[str, Any]:
    o = state.options
    return {
        "v": 1,
        "ruleset": state.ruleset.name,
        "options": [
            o.turn_timer_ms,
            o.turn_cap,
            o.rounds,
            o.elimination_cap,
            o.opening_threshold,
            o.target_score,
            o.buy_backs,
            o.claim_window_ms,
            [[c.groups, c.runs, c.no_final_discard] for c in o.contracts],
        ],
        "seats": state.seats,
        "hands": state.hands,
        "stock": state.stock,
        "discard": state.discard,
        "melds": [
            [
                m.id,
                m.owner,
                int(m.kind),
                list(m.cards),
                m.rank,
                m.suit,
                [list(j) for j in m.joker_suits],
            ]
            for m in state.melds
        ],
        "opened": state.opened,
        "totals": state.totals,
        "status": [int(s) for s in state.status],
        "turn": [
            int(state.phase),
            state.round_no,
            state.dealer,
            state.current,
            state.turn,
            state.deadline_ms,
            state.taken_discard,
            state.drawn,
            state.next_meld_id,
            state.reshuffles,
            state.seed,
            state.winner,
            state.began_opened,
            state.moved,
            state.taken_used,
            state.reposed,
            state.claim_card,
            state.claim_deadline_ms,
            state.end_reason,
            state.resumed_ms,
            state.top_discarder,
        ],
        "claimants": state.claimants,
        "buy_backs": state.buy_backs,
        "deal": [list(state.deal_order), state.deal_salt],
        "results": [
            [
                r.round_no,
                r.winner,
                r.reason,
                list(r.penalties),
                list(r.totals),
                r.doubled,
                [list(h) for h in r.hands],
            ]
            for r in state.results
        ],
    }


def dumps(state: GameState) -> bytes:
    return orjson.dumps(document(state))
