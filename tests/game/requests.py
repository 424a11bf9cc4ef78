"""Engine actions as the game service's requests, and the record of an acknowledged
one (`Sent`): what every client of the service tests sends, whatever carries it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.protobuf.message import Message

from services.common.pb.rummy.v1 import cards_pb2, game_pb2, table_pb2
from services.game.rules.actions import (
    Action,
    Claim,
    Discard,
    DrawStock,
    LayOff,
    Leave,
    Meld,
    MeldSpec,
    Reposer,
    SwapJoker,
    TakeDiscard,
)


def request_for(table_id: str, action: Action, **common: Any) -> tuple[str, Message]:
    """The RPC name and request message that carry one engine action."""
    base = {"table_id": table_id, **common}
    match action:
        case DrawStock():
            return "DrawStock", game_pb2.DrawStockRequest(**base)
        case TakeDiscard():
            return "TakeDiscard", game_pb2.TakeDiscardRequest(**base)
        case Meld():
            specs = [meld_spec(m) for m in action.melds]
            return "Meld", game_pb2.MeldRequest(melds=specs, **base)
        case LayOff():
            return "LayOff", game_pb2.LayOffRequest(
                meld_id=action.meld_id, card_ids=action.cards, side=int(action.side), **base
            )
        case SwapJoker():
            request = game_pb2.SwapJokerRequest(
                meld_id=action.meld_id,
                joker_card_id=action.joker,
                replacement_card_ids=[action.replacement]
                + ([action.second] if action.second >= 0 else []),
                **base,
            )
            if action.lay_off is not None:
                request.lay_off.CopyFrom(
                    game_pb2.LayOffPlacement(
                        meld_id=action.lay_off.meld_id,
                        card_ids=action.lay_off.cards,
                        side=int(action.lay_off.side),
                    )
                )
            elif action.new_meld is not None:
                request.new_meld.CopyFrom(meld_spec(action.new_meld))
            return "SwapJoker", request
        case Discard():
            return "Discard", game_pb2.DiscardRequest(card_id=action.card, **base)
        case Leave():
            return "Leave", game_pb2.LeaveRequest(**base)
        case Reposer():
            return "Reposer", game_pb2.ReposerRequest(**base)
        case Claim():
            return "Claim", game_pb2.ClaimRequest(card_id=action.card, **base)
    raise AssertionError(f"no RPC for {action}")


def meld_spec(spec: MeldSpec) -> game_pb2.MeldSpec:
    """An engine meld as a request names it (the engine's kinds number as the API's)."""
    return game_pb2.MeldSpec(
        card_ids=spec.cards,
        joker_suits=[
            game_pb2.JokerSuit(card_id=joker, suit=cards_pb2.Suit.ValueType(suit + 1))
            for joker, suit in spec.joker_suits
        ],
        kind=table_pb2.MeldKind.ValueType(spec.kind or 0),
    )


@dataclass(frozen=True, slots=True)
class Sent:
    """One acknowledged action: what was sent and the version it was answered with."""

    request_id: str
    action: Action
    version: int
    seat: int
    reply: Any = field(compare=False, repr=False)
