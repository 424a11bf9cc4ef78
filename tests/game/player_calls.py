"""PlayerService calls for the tests: a signed-in `Player` asks through the
public API, and a few finished games set up quickly (a training table the
person leaves at once; two people playing a fixed deal to the end)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import asyncpg
import grpc
from google.protobuf.message import Message

from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import game_pb2, player_pb2, player_pb2_grpc
from services.game.standings import FINE

from .harness import (
    CALL_TIMEOUT_S,
    Player,
    create_table,
    login,
    play_to_end,
    service_auth,
    shuffled_deck,
)

DECK_SEED = 11
"""A fixed deal two greedy players finish in one round."""
LEVELS = (
    "FROM player_standings, LATERAL (VALUES (0::smallint, floor(rating)::bigint),"
    f" (1::smallint, floor(rating * {FINE})::bigint)) AS k(level, bucket)"
    " WHERE rated_games > 0 GROUP BY ruleset, k.level, k.bucket"
)
"""The ranked standings grouped by bucket at both levels: a point of rating
(level 0), and its 64ths (level 1)."""
RECOUNT = (
    "INSERT INTO rating_buckets (ruleset, level, bucket, players)"
    f" SELECT ruleset, k.level, k.bucket, count(*) {LEVELS}"
    " ON CONFLICT (ruleset, level, bucket) DO UPDATE SET players = excluded.players"
)
"""The leaderboards' buckets counted again from the standings (after a test wrote
standings of its own)."""
BUCKETS = (
    "SELECT ruleset, level, bucket, players FROM rating_buckets WHERE players > 0 ORDER BY 1, 2, 3"
)
COUNTED = f"SELECT ruleset, k.level, k.bucket, count(*)::int AS players {LEVELS} ORDER BY 1, 2, 3"
"""The buckets as the standings say they should be."""


async def ask(player: Player, method: str, request: Message) -> Any:
    """One PlayerService call as ``player``."""
    stub = player_pb2_grpc.PlayerServiceStub(player.channel)
    return await getattr(stub, method)(request, metadata=player.auth, timeout=CALL_TIMEOUT_S)


async def all_games(player: Player, page_size: int = 0) -> list[player_pb2.PlayedGame]:
    games: list[player_pb2.PlayedGame] = []
    token = ""
    while True:
        page = await ask(
            player, "ListGames", player_pb2.ListGamesRequest(page_size=page_size, page_token=token)
        )
        games.extend(page.games)
        token = page.next_page_token
        if not token:
            return games


async def whole_replay(
    player: Player, table_id: str, page_size: int = 0
) -> tuple[player_pb2.GetReplayResponse, list[Any]]:
    """The first page (with the header and deals) and every event of every page."""
    first = await ask(
        player, "GetReplay", player_pb2.GetReplayRequest(table_id=table_id, page_size=page_size)
    )
    events = list(first.events)
    token = first.next_page_token
    while token:
        page = await ask(
            player,
            "GetReplay",
            player_pb2.GetReplayRequest(table_id=table_id, page_size=page_size, page_token=token),
        )
        assert not page.deals, "the deals come on the first page only"
        events.extend(page.events)
        token = page.next_page_token
    return first, events


async def played_game(channel: grpc.aio.Channel, names: Sequence[str] = ("Ann", "Ben")) -> str:
    """A rated game of ``names`` (logged in now) played greedily to its end."""
    players = [await login(channel, n) for n in names]
    table_id = await create_table(channel, players, deck_order=shuffled_deck(DECK_SEED))
    await play_to_end(players, table_id)
    return table_id


async def training_game(channel: grpc.aio.Channel, person: Player) -> str:
    """A table of ``person`` and a bot, which ends as soon as the person leaves."""
    stub = tables_pb2_grpc.TableServiceStub(channel)
    created = await stub.CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="cafe",
            players=[
                tables_pb2.SeatedPlayer(player_id=person.player_id, display_name=person.name),
                tables_pb2.SeatedPlayer(player_id="bot-1", display_name="Bot", is_bot=True),
            ],
        ),
        metadata=service_auth(),
        timeout=CALL_TIMEOUT_S,
    )
    await person.call(
        "Leave", game_pb2.LeaveRequest(table_id=created.table_id, request_id=uuid.uuid4().hex)
    )
    return str(created.table_id)


async def fetch(dsn: str, query: str, *args: object) -> list[asyncpg.Record]:
    con = await asyncpg.connect(dsn)
    try:
        return list(await con.fetch(query, *args))
    finally:
        await con.close()
