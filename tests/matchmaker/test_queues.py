"""Quick-match queues fill and start real tables that the players then play."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from tests.game.harness import Player, play_to_end

from .harness import backend, players, queue_until_match


@pytest.mark.parametrize("size", [2, 3, 4])
async def test_queue_fills_and_the_table_is_played(fresh_dsn: str, size: int) -> None:
    async with backend(fresh_dsn) as b:
        people = await players(b.channel(), size)
        request = mm.EnqueueRequest(table_size=size, ruleset="cafe")
        results = await asyncio.gather(*(queue_until_match(p, request) for p in people))
        matches = [m for _, m in results]
        assert len({m.table_id for m in matches}) == 1
        assert sorted(m.seat for m in matches) == list(range(size))
        assert all(m.table_size == size for m in matches)
        first = results[0][0][0]
        assert first.WhichOneof("update") == "ticket"
        assert first.ticket.state == mm.TICKET_STATE_QUEUED
        game_channel = grpc.aio.insecure_channel(matches[0].game_target)
        try:
            seated = [Player(game_channel, p.token, p.player_id, p.name) for p in people]
            await play_to_end(seated, matches[0].table_id)
            view = await seated[0].view(matches[0].table_id)
            assert view.phase == table_pb2.PHASE_GAME_OVER
        finally:
            await game_channel.close()
