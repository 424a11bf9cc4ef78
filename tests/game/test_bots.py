"""Bot seats are played by the server itself, through the same sweeper as timeouts."""

from __future__ import annotations

import grpc

from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, table_pb2

from .harness import GreedyBot, greedy_turn, login, service_auth


async def test_a_human_plays_a_whole_game_against_a_bot(channel: grpc.aio.Channel) -> None:
    human = await login(channel, "Human")
    stub = game_pb2_grpc.GameServiceStub(channel)
    created = await stub.CreateTable(
        game_pb2.CreateTableRequest(
            ruleset="cafe",
            players=[
                game_pb2.SeatedPlayer(player_id=human.player_id, display_name="Human"),
                game_pb2.SeatedPlayer(player_id="bot-1", display_name="Bot", is_bot=True),
            ],
        ),
        metadata=service_auth(),
    )
    table_id = created.table_id
    view = await human.view(table_id)
    assert view.seats[1].is_bot and not view.seats[0].is_bot
    bot = GreedyBot()
    bot_turns = 0
    watcher = human.watch(table_id)
    while (event := await watcher.next()) is not None:
        if event.kind == table_pb2.EVENT_KIND_GAME_ENDED:
            break
        if event.kind != table_pb2.EVENT_KIND_TURN_STARTED:
            continue
        if event.seat == 1:
            bot_turns += 1
            continue
        await greedy_turn(human, table_id, await human.view(table_id), bot)
    final = await human.view(table_id)
    assert final.phase == table_pb2.PHASE_GAME_OVER
    assert bot_turns > 0
