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


async def test_a_finished_tables_view_carries_the_games_result(channel: grpc.aio.Channel) -> None:
    """A client that comes back after the end reads the result from GetTable alone:
    the same as the GameEnded event said. While the game goes on there is none."""
    players = [await login(channel, f"F{i}") for i in range(2)]
    table_id = await create_table(channel, players)
    assert not (await players[0].view(table_id)).HasField("result")
    await play_to_end(players, table_id)
    watcher = players[1].watch(table_id)
    while await watcher.next() is not None:
        pass
    ended = watcher.events[-1]
    assert ended.kind == table_pb2.EVENT_KIND_GAME_ENDED
    for player in players:
        view = await player.view(table_id)
        assert view.result == ended.game_ended
    assert ended.game_ended.reason != table_pb2.END_REASON_UNSPECIFIED
