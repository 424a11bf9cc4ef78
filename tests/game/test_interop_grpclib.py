"""A whole game driven by a client on grpclib, not grpcio: login, create, every
move, refusals with their reasons, and the Watch stream."""

from __future__ import annotations

import asyncio

import pytest
from grpclib.client import Channel
from grpclib.const import Status
from grpclib.exceptions import GRPCError

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import Discard, DrawStock, Meld
from services.game.rules.ruleset import CAFE
from services.game.rules.scoring import hand_penalty
from services.game.server import GameServer

from . import grpclib_client as gl
from .harness import WAIT_S, play_to_end, shuffled_deck
from .stored import assert_log_matches, table_db


async def collect(player: gl.GrpclibPlayer, table_id: str) -> list[table_pb2.TableEvent]:
    async with asyncio.timeout(WAIT_S):
        return [event async for event in player.watch(table_id)]


async def test_a_whole_game_through_grpclib(server: GameServer, fresh_dsn: str) -> None:
    async with Channel("127.0.0.1", server.port) as channel:
        players = [await gl.login(channel, f"App{i}") for i in range(2)]
        fresh = await players[0].refresh()
        assert fresh.player_id == players[0].player_id and fresh.token != players[0].token
        players[0].token = fresh.token

        table_id = await gl.create_table(channel, players, deck_order=shuffled_deck(25))
        watching = [asyncio.create_task(collect(p, table_id)) for p in players]

        # Refusals reach grpclib with their status and ErrorInfo reason.
        with pytest.raises(GRPCError) as out_of_turn:
            await players[1].send(table_id, DrawStock())
        assert out_of_turn.value.status is Status.FAILED_PRECONDITION
        assert gl.reason(out_of_turn.value) == "NOT_YOUR_TURN"
        with pytest.raises(GRPCError) as no_token:
            await gl.unary(channel, gl.GAME["GetTable"], gl.GAME["GetTable"].request())
        assert no_token.value.status is Status.UNAUTHENTICATED
        assert gl.reason(no_token.value) == "TOKEN_MISSING"

        await play_to_end(players, table_id)
        streams = await asyncio.gather(*watching)
        views = [await p.view(table_id) for p in players]

    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    for events in streams:
        assert_log_matches(events, log)
        assert events[-1].kind == table_pb2.EVENT_KIND_GAME_ENDED
    assert sum(len(p.sent) for p in players) == log[-1].version - 1
    moves = {type(s.action) for p in players for s in p.sent}
    assert moves >= {DrawStock, Meld, Discard}
    result = views[0].round_results[0]
    for v in views:
        assert v.phase == table_pb2.PHASE_GAME_OVER
        penalty = (
            0 if v.my_seat == result.winner_seat else hand_penalty([c.id for c in v.hand], CAFE)
        )
        assert result.scores[v.my_seat].points == penalty
