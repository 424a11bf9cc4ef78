"""A replica shut down while many tables are being played: actions in flight
commit or are refused with a status a client retries on; nothing is lost."""

from __future__ import annotations

import asyncio

import grpc

from clients.cli.viewstate import state_from_view
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.bots import GreedyBot
from services.game.server import GameServer

from .decks import shuffled_deck
from .harness import Player, create_table, login, play_to_end
from .stored import table_db
from .test_replicas import assert_actions_logged_once

TABLES = 6
RETRYABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}
"""What a client may see from a replica going away: both mean "try elsewhere"."""


async def _play_until_cut(players: list[Player], table_id: str, failures: list) -> None:
    """Greedy moves on replica A until a call fails; the failed move is kept to retry."""
    bot = GreedyBot()
    by_seat: dict[int, Player] = {}
    for p in players:
        view = await p.view(table_id)
        by_seat[view.my_seat] = p
    while True:
        try:
            view = await players[0].view(table_id)
            if view.phase == table_pb2.PHASE_GAME_OVER:
                return
            current = by_seat[view.current_seat]
            mine = await current.view(table_id)
            action = bot.move(state_from_view(mine), mine.my_seat)
            if action is None:
                await asyncio.sleep(0.05)
                continue
            request_id = f"{table_id}-{len(current.sent)}-{mine.version}"
            try:
                await current.send(table_id, action, request_id=request_id)
            except grpc.aio.AioRpcError as error:
                failures.append((current, action, request_id, error.code()))
                return
        except grpc.aio.AioRpcError as error:
            failures.append((None, None, None, error.code()))
            return


async def test_stopping_a_replica_under_load_loses_no_acknowledged_action(
    replicas: list[GameServer], channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    a, b = channels
    tables = []
    for t in range(TABLES):
        players = [await login(a, f"T{t}P{i}") for i in range(2)]
        table_id = await create_table(a, players, deck_order=shuffled_deck(100 + t))
        tables.append((table_id, players))
    failures: list = []
    loops = [asyncio.create_task(_play_until_cut(p, t, failures)) for t, p in tables]
    # Stop once every table is under way, by moves made rather than by time:
    # a game lasts dozens of moves, and a fast machine plays them in well
    # under a second.
    async with asyncio.timeout(30):
        while min(sum(len(p.sent) for p in players) for _, players in tables) < 4:
            await asyncio.sleep(0.005)
    await replicas[0].stop(2.0)
    await asyncio.wait_for(asyncio.gather(*loops), 30)
    assert failures, "the stop cut no call: the test did not test a shutdown under load"
    assert {code for *_, code in failures} <= RETRYABLE, failures
    for current, action, request_id, _ in failures:
        if current is not None:
            current.use(b)
            # The cut call may or may not have committed: its retry applies it once.
            await current.send(
                table_id=_table_of(tables, current), action=action, request_id=request_id
            )
    for table_id, players in tables:
        for p in players:
            p.use(b)
        await play_to_end(players, table_id)
    async with table_db(fresh_dsn) as db:
        for table_id, players in tables:
            log = await db.log(table_id)
            assert_actions_logged_once([s for p in players for s in p.sent], log)


def _table_of(tables: list, player: Player) -> str:
    return next(t for t, players in tables if player in players)
