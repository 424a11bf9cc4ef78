"""The migration that adds players' records fills them from the finished tables
already kept, as the game's end writes them: results, places, counts, streaks
(only the rating changes, never kept before, are unknown)."""

from __future__ import annotations

import uuid

import asyncpg
import grpc

from services.common.db import load_migrations, migrate, with_database

from .harness import login
from .player_calls import played_game, training_game

COPIED = ("players", "tables", "table_seats", "table_events")
RECORDS = {
    "game_results": "table_id",
    "player_games": "player_id, finished_at, table_id",
    "player_standings": "player_id, ruleset",
    "rating_buckets": "ruleset, level, bucket",
}


async def _rows(con: asyncpg.Connection, table: str, order: str) -> list[dict[str, object]]:
    return [dict(r) for r in await con.fetch(f"SELECT * FROM {table} ORDER BY {order}")]


async def test_the_migration_records_the_games_finished_before_it(
    channel: grpc.aio.Channel, fresh_dsn: str, database_url: str
) -> None:
    await played_game(channel, ("Ann", "Ben"))
    await played_game(channel, ("Cy", "Dee"))
    person = await login(channel, "Eve")
    for _ in range(2):
        await training_game(channel, person)

    name = f"test_{uuid.uuid4().hex[:20]}"
    admin = await asyncpg.connect(database_url)
    await admin.execute(f'CREATE DATABASE "{name}"')
    source, older = await asyncpg.connect(fresh_dsn), None
    try:
        older = await asyncpg.connect(with_database(database_url, name))
        await migrate(older, migrations=[m for m in load_migrations() if m.version < 14])
        # Before ratings were per rule set, a player's one rating was in `players`:
        # here each played one rule set, whose rating their row then held.
        held = {
            r["player_id"]: r
            for r in await source.fetch("SELECT player_id, rating, deviation FROM player_standings")
        }
        for table in COPIED:
            rows = [dict(r) for r in await source.fetch(f"SELECT * FROM {table}")]
            if table == "players":
                for row in rows:
                    if row["id"] in held:
                        row["rating"] = held[row["id"]]["rating"]
                        row["rating_deviation"] = held[row["id"]]["deviation"]
            await older.copy_records_to_table(
                table, records=[tuple(r.values()) for r in rows], columns=list(rows[0].keys())
            )
        await migrate(older)

        for table, order in RECORDS.items():
            written = await _rows(source, table, order)
            filled = await _rows(older, table, order)
            assert written, table
            if table == "player_games":
                # The ratings before and after were never kept: the rest is.
                for row in written:
                    row["rating_before"] = row["rating_after"] = None
            assert filled == written, table
    finally:
        await source.close()
        if older is not None:
            await older.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
