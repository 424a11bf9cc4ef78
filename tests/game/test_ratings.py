"""A finished game updates its players' ratings (mean and deviation), in the commit
that ends it; a training table (bots at it) leaves them as they were."""

from __future__ import annotations

import asyncpg
import grpc
import pytest

from services.common.db import migrate
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.common.rating import DEFAULT_DEVIATION, DEFAULT_RATING, Rating, updated
from services.game import statements

from .harness import GreedyBot, create_table, greedy_turn, login, play_to_end, service_auth

NEWCOMER = Rating(DEFAULT_RATING, DEFAULT_DEVIATION)


async def ratings(dsn: str, player_ids: list[str]) -> list[Rating]:
    con = await asyncpg.connect(dsn)
    try:
        rows = await con.fetch(
            "SELECT id, rating, rating_deviation FROM players WHERE id = ANY($1::text[])",
            player_ids,
        )
    finally:
        await con.close()
    found = {r["id"]: Rating(r["rating"], r["rating_deviation"]) for r in rows}
    return [found[p] for p in player_ids]


async def test_a_finished_game_rates_both_players_in_the_commit_that_ends_it(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"D{i}") for i in range(2)]
    ids = [p.player_id for p in players]
    assert await ratings(fresh_dsn, ids) == [NEWCOMER] * 2
    table_id = await create_table(channel, players)
    await play_to_end(players, table_id)
    after = await ratings(fresh_dsn, ids)
    # One won, the other lost: newcomers' ratings move as the model says.
    winner, loser = updated([NEWCOMER] * 2, [0, 1])
    assert winner.mu > DEFAULT_RATING > loser.mu
    assert winner.sigma < DEFAULT_DEVIATION and loser.sigma < DEFAULT_DEVIATION
    assert sorted(after) == [loser, winner]
    # Both rows were written by the transaction that logged the game's end: one commit.
    con = await asyncpg.connect(fresh_dsn)
    try:
        ended_by = await con.fetchval(
            "SELECT xmin::text FROM table_events WHERE table_id = $1 AND kind = 'GameEnded'",
            table_id,
        )
        rated_by = await con.fetch(
            "SELECT xmin::text AS x FROM players WHERE id = ANY($1::text[])", ids
        )
    finally:
        await con.close()
    assert ended_by is not None
    assert [r["x"] for r in rated_by] == [ended_by, ended_by]


async def test_a_finished_game_moves_its_players_ratings(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"R{i}") for i in range(4)]
    ids = [p.player_id for p in players]
    assert await ratings(fresh_dsn, ids) == [NEWCOMER] * 4
    table_id = await create_table(channel, players)
    await play_to_end(players, table_id)
    view = await players[0].view(table_id)
    winner = view.round_results[-1].winner_seat
    after = await ratings(fresh_dsn, [view.seats[s].player_id for s in range(4)])
    assert after[winner].mu > DEFAULT_RATING
    assert min(r.mu for r in after) < DEFAULT_RATING
    assert all(r.sigma < DEFAULT_DEVIATION for r in after)


async def test_a_table_with_bots_leaves_ratings_alone(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    humans = [await login(channel, f"H{i}") for i in range(2)]
    stub = tables_pb2_grpc.TableServiceStub(channel)
    created = await stub.CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="cafe",
            players=[
                *(
                    tables_pb2.SeatedPlayer(player_id=h.player_id, display_name=h.name)
                    for h in humans
                ),
                tables_pb2.SeatedPlayer(player_id="bot-r", display_name="Bot", is_bot=True),
            ],
        ),
        metadata=service_auth(),
    )
    table_id = created.table_id
    brain = GreedyBot()
    watcher = humans[0].watch(table_id)
    while (event := await watcher.next()) is not None:
        if event.kind == table_pb2.EVENT_KIND_GAME_ENDED:
            break
        if event.kind == table_pb2.EVENT_KIND_TURN_STARTED and event.seat < len(humans):
            human = humans[event.seat]
            await greedy_turn(human, table_id, await human.view(table_id), brain)
    assert (await humans[0].view(table_id)).phase == table_pb2.PHASE_GAME_OVER
    assert await ratings(fresh_dsn, [h.player_id for h in humans]) == [NEWCOMER] * 2


async def test_two_games_ending_at_once_update_a_shared_players_rating_in_turn(
    fresh_dsn: str,
) -> None:
    """The ratings a game's end reads stay locked until its commit: a second game
    ending meanwhile waits, then reads the first one's result (no lost update)."""
    first, second = await asyncpg.connect(fresh_dsn), await asyncpg.connect(fresh_dsn)
    try:
        await migrate(first)
        await first.execute(
            "INSERT INTO players (id, display_name) VALUES ('a', 'A'), ('b', 'B'), ('c', 'C')"
        )
        async with first.transaction():
            rows = await first.fetch(statements.PLAYER_RATINGS.sql, ["b", "a"])
            assert [r["id"] for r in rows] == ["a", "b"], "locked in one order"
            await first.execute(statements.SET_RATING, "a", Rating(1600.0, 90.0))
            async with second.transaction():
                await second.execute("SET LOCAL lock_timeout = '200ms'")
                with pytest.raises(asyncpg.LockNotAvailableError):
                    await second.fetch(statements.PLAYER_RATINGS.sql, ["a", "c"])
        async with second.transaction():
            rows = await second.fetch(statements.PLAYER_RATINGS.sql, ["a", "c"])
        assert {r["id"]: r["rating"] for r in rows}["a"] == [1600.0, 90.0]
    finally:
        await first.close()
        await second.close()
