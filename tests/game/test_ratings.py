"""A finished game updates its players' ratings (mean and deviation) in its rule
set, and there only, in the commit that ends it; a training table (bots at it)
leaves them as they were."""

from __future__ import annotations

import asyncpg
import grpc
import pytest

from services.common.db import migrate
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.common.rating import DEFAULT_DEVIATION, DEFAULT_RATING, Rating, updated
from services.game import results

from .harness import GreedyBot, create_table, greedy_turn, login, play_to_end, service_auth

NEWCOMER = Rating(DEFAULT_RATING, DEFAULT_DEVIATION)


async def ratings(dsn: str, player_ids: list[str], ruleset: str = "cafe") -> list[Rating]:
    """Each player's rating in ``ruleset``: their standing's, else the one carried
    over for them (``players.rating``)."""
    con = await asyncpg.connect(dsn)
    try:
        rows = await con.fetch(
            "SELECT p.id, coalesce(s.rating, p.rating) AS mu,"
            " coalesce(s.deviation, p.rating_deviation) AS sigma FROM players p"
            " LEFT JOIN player_standings s ON s.player_id = p.id AND s.ruleset = $2"
            " WHERE p.id = ANY($1::text[])",
            player_ids,
            ruleset,
        )
    finally:
        await con.close()
    found = {r["id"]: Rating(r["mu"], r["sigma"]) for r in rows}
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
            "SELECT xmin::text AS x FROM player_standings WHERE player_id = ANY($1::text[])", ids
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


async def test_a_rating_is_its_rule_sets_own(channel: grpc.aio.Channel, fresh_dsn: str) -> None:
    """A rami51 game moves its players' rami51 ratings from where they stood in
    rami51, and leaves their cafe ratings as they were."""
    players = [await login(channel, f"S{i}") for i in range(2)]
    ids = [p.player_id for p in players]
    await play_to_end(players, await create_table(channel, players))
    cafe = await ratings(fresh_dsn, ids, "cafe")
    assert cafe != [NEWCOMER] * 2
    assert await ratings(fresh_dsn, ids, "rami51") == [NEWCOMER] * 2
    table_id = await create_table(channel, players, ruleset="rami51")
    await play_to_end(players, table_id)
    view = await players[0].view(table_id)
    places = [0 if s == view.result.winner_seat else 1 for s in range(2)]
    assert await ratings(fresh_dsn, ids, "rami51") == updated([NEWCOMER] * 2, places)
    assert await ratings(fresh_dsn, ids, "cafe") == cafe
    con = await asyncpg.connect(fresh_dsn)
    try:
        kept = await con.fetch(
            "SELECT rating, rating_deviation FROM players WHERE id = ANY($1::text[])", ids
        )
    finally:
        await con.close()
    assert [tuple(r) for r in kept] == [NEWCOMER] * 2, "the carried-over rating stays"


async def test_a_first_game_in_a_rule_set_starts_from_the_carried_over_rating(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """A player whose single rating was carried over (``players.rating``) starts
    every rule set they have not played from it."""
    players = [await login(channel, f"C{i}") for i in range(2)]
    ids = [p.player_id for p in players]
    carried = [Rating(1720.0, 80.0), Rating(1390.0, 120.0)]
    con = await asyncpg.connect(fresh_dsn)
    try:
        for player_id, (mu, sigma) in zip(ids, carried, strict=True):
            await con.execute(
                "UPDATE players SET rating = $2, rating_deviation = $3 WHERE id = $1",
                player_id,
                mu,
                sigma,
            )
    finally:
        await con.close()
    table_id = await create_table(channel, players, ruleset="rami51")
    await play_to_end(players, table_id)
    view = await players[0].view(table_id)
    places = [0 if s == view.result.winner_seat else 1 for s in range(2)]
    assert await ratings(fresh_dsn, ids, "rami51") == updated(carried, places)
    assert await ratings(fresh_dsn, ids, "cafe") == carried


async def test_two_games_ending_at_once_update_a_shared_players_rating_in_turn(
    fresh_dsn: str,
) -> None:
    """The ratings a game's end reads stay locked until its commit: a second game
    ending meanwhile waits, then reads the first one's result (no lost update)."""
    first, second = await asyncpg.connect(fresh_dsn), await asyncpg.connect(fresh_dsn)
    lock = results.RATINGS.sql
    try:
        await migrate(first)
        await first.execute(
            "INSERT INTO players (id, display_name) VALUES ('a', 'A'), ('b', 'B'), ('c', 'C')"
        )
        async with first.transaction():
            rows = await first.fetch(lock, "cafe", ["b", "a"])
            assert [r["id"] for r in rows] == ["a", "b"], "locked in one order"
            await first.execute(
                "INSERT INTO player_standings (player_id, ruleset, games, wins, streak,"
                " rated_games, rating, deviation, last_game_at)"
                " VALUES ('a', 'cafe', 1, 1, 1, 1, 1600, 90, now())"
            )
            async with second.transaction():
                await second.execute("SET LOCAL lock_timeout = '200ms'")
                with pytest.raises(asyncpg.LockNotAvailableError):
                    await second.fetch(lock, "cafe", ["a", "c"])
        async with second.transaction():
            rows = await second.fetch(lock, "cafe", ["a", "c"])
        assert {r["id"]: (r["rating"], r["deviation"]) for r in rows} == {
            "a": (1600.0, 90.0),
            "c": (NEWCOMER.mu, NEWCOMER.sigma),
        }
    finally:
        await first.close()
        await second.close()
