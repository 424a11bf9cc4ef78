"""A whole game played by real clients against a real server and PostgreSQL."""

from __future__ import annotations

import grpc

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.ruleset import CAFE
from services.game.rules.scoring import hand_penalty

from .harness import create_table, login, play_to_end


async def test_four_players_play_a_game_to_the_end(channel: grpc.aio.Channel) -> None:
    players = [await login(channel, f"P{i}") for i in range(4)]
    table_id = await create_table(channel, players)
    await play_to_end(players, table_id)
    views = [await p.view(table_id) for p in players]
    for v in views:
        assert v.phase == table_pb2.PHASE_GAME_OVER
        assert len(v.round_results) == 1
    result = views[0].round_results[0]
    winner = result.winner_seat
    for v in views:
        mine = next(s for s in result.scores if s.seat == v.my_seat)
        # Each seat's round score is exactly its hand's penalty, and the winner's is 0.
        expected = 0 if v.my_seat == winner else hand_penalty([c.id for c in v.hand], CAFE)
        assert mine.points == expected
        assert v.seats[v.my_seat].score_total == expected
