"""Replays and retention agree: a game older than the event logs are kept is
NOT_FOUND (REPLAY_EXPIRED) before and after the purge deletes its table, while
the history and the profile's counts outlive it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import grpc

from services.common.db import open_pool
from services.common.pb.rummy.v1 import player_pb2
from services.common.wire.reasons import ServiceReason
from services.game import retention
from services.game.server import GameServer

from .harness import address, login, refused, start_server
from .player_calls import all_games, ask, training_game

DAY_S = 86_400.0


async def _age(dsn: str, table_id: str, days: int) -> None:
    """The game finished ``days`` earlier than it did."""
    con = await asyncpg.connect(dsn)
    try:
        shift = timedelta(days=days)
        for table, key in (
            ("tables", "id"),
            ("game_results", "table_id"),
            ("player_games", "table_id"),
        ):
            await con.execute(
                f"UPDATE {table} SET finished_at = finished_at - $2::interval"
                f" WHERE {key} = $1::uuid",
                table_id,
                shift,
            )
    finally:
        await con.close()


async def test_a_replay_past_retention_is_expired_and_its_counts_stay(
    server: GameServer, channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    assert server.config.event_retention_days == 30
    person = await login(channel, "Old")
    table_id = await training_game(channel, person)
    request = player_pb2.GetReplayRequest(table_id=table_id)
    assert (await ask(person, "GetReplay", request)).events
    before = (await ask(person, "GetProfile", player_pb2.GetProfileRequest())).profile

    await _age(fresh_dsn, table_id, 31)
    expired = (grpc.StatusCode.NOT_FOUND, ServiceReason.REPLAY_EXPIRED)
    assert await refused(ask(person, "GetReplay", request)) == expired, "before the purge"

    # A server that keeps event logs for good still shows it.
    forever = await start_server(fresh_dsn, event_retention_days=0)
    try:
        async with grpc.aio.insecure_channel(address(forever)) as other:
            person.use(other)
            assert (await ask(person, "GetReplay", request)).events
            [game] = await all_games(person)
            assert not game.HasField("replay_until")
    finally:
        await forever.stop(0)
        person.use(channel)

    pool = await open_pool(fresh_dsn, max_size=1)
    try:
        assert await retention.purge_finished(pool, older_than_s=30 * DAY_S) == 1
    finally:
        await pool.close()
    assert await refused(ask(person, "GetReplay", request)) == expired, "after the purge"
    [game] = await all_games(person)
    assert game.table_id == table_id
    until = game.replay_until.ToDatetime()
    assert until == game.finished_at.ToDatetime() + timedelta(days=30)
    assert until < datetime.now(UTC).replace(tzinfo=None), "the replay is gone, and said so"
    after = (await ask(person, "GetProfile", player_pb2.GetProfileRequest())).profile
    assert after.standings == before.standings
