"""The bench's players: bots with their own tokens, the matchmaker's service
token that creates tables, and one engine action sent through its RPC."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from bench.game.settings import SECRET
from services.common.auth import issue_service_token, issue_token
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc
from services.game.rules.actions import (
    Action,
    Discard,
    DrawStock,
    LayOff,
    Meld,
    SwapJoker,
    TakeDiscard,
)


@dataclass
class Bot:
    player_id: str
    metadata: tuple[tuple[str, str]]

    @classmethod
    def new(cls) -> Bot:
        player_id = f"bench-{uuid.uuid4().hex[:12]}"
        token = issue_token(player_id, secret=SECRET, now=time.time())
        return cls(player_id, (("authorization", f"Bearer {token}"),))


def service_metadata() -> tuple[tuple[str, str]]:
    token = issue_service_token("matchmaker", secret=SECRET, now=time.time())
    return (("authorization", f"Bearer {token}"),)


async def send(
    stub: game_pb2_grpc.GameServiceAsyncStub, bot: Bot, table_id: str, action: Action
) -> Any:
    """One engine action through its RPC; the reply carries `version` and `view`."""
    md = bot.metadata
    match action:
        case DrawStock():
            return await stub.DrawStock(game_pb2.DrawStockRequest(table_id=table_id), metadata=md)
        case TakeDiscard():
            return await stub.TakeDiscard(
                game_pb2.TakeDiscardRequest(table_id=table_id), metadata=md
            )
        case Meld():
            specs = [game_pb2.MeldSpec(card_ids=m.cards) for m in action.melds]
            return await stub.Meld(
                game_pb2.MeldRequest(table_id=table_id, melds=specs), metadata=md
            )
        case LayOff():
            return await stub.LayOff(
                game_pb2.LayOffRequest(
                    table_id=table_id,
                    meld_id=action.meld_id,
                    card_ids=action.cards,
                    side=game_pb2.Side.ValueType(int(action.side)),
                ),
                metadata=md,
            )
        case SwapJoker():
            request = game_pb2.SwapJokerRequest(
                table_id=table_id,
                meld_id=action.meld_id,
                joker_card_id=action.joker,
                replacement_card_ids=[action.replacement],
            )
            if action.lay_off is not None:
                request.lay_off.meld_id = action.lay_off.meld_id
                request.lay_off.card_ids.extend(action.lay_off.cards)
                request.lay_off.side = game_pb2.Side.ValueType(int(action.lay_off.side))
            elif action.new_meld is not None:
                request.new_meld.card_ids.extend(action.new_meld.cards)
            return await stub.SwapJoker(request, metadata=md)
        case Discard():
            return await stub.Discard(
                game_pb2.DiscardRequest(table_id=table_id, card_id=action.card), metadata=md
            )
    raise ValueError(f"no RPC for {action}")
