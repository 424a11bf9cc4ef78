"""A rank from the rating buckets at both levels: the whole-point buckets above,
the fine buckets (64ths of a point) above within the player's point, and the
players ahead in their own fine bucket, is their place in the full order, where
many players share a point, its fine buckets, their edges and a rating."""

from __future__ import annotations

import math
import random

import asyncpg

from services.common.db import migrate
from services.game import player_queries
from services.game.standings import FINE, Change, Standing, bucket_moves, buckets

from .player_calls import RECOUNT

POINT = 1500
RATINGS = [
    1499.99,
    1500.0,
    1500.01,
    POINT + 1 / FINE,  # the first fine bucket's upper edge: the second one's floor
    math.nextafter(POINT + 1 / FINE, 0),  # just below it: still the first
    1500.25,
    1500.5,
    1500.75,
    POINT + 63 / FINE,  # the point's last fine bucket
    1500.99,
    math.nextafter(POINT + 1, 0),  # the last rating of the point
    1501.0,
    1512.25,
]
"""Most of them in one point (1500), over several of its fine buckets."""


def test_a_rating_counts_in_its_point_and_in_its_64th() -> None:
    assert buckets(1500.0) == ((0, 1500), (1, 1500 * FINE))
    assert buckets(POINT + 1 / FINE) == ((0, 1500), (1, 1500 * FINE + 1))
    assert buckets(math.nextafter(POINT + 1 / FINE, 0)) == ((0, 1500), (1, 1500 * FINE))
    assert buckets(math.nextafter(POINT + 1, 0)) == ((0, 1500), (1, 1500 * FINE + 63))
    assert buckets(-0.5) == ((0, -1), (1, -32))


def test_a_move_within_a_point_moves_only_the_fine_buckets() -> None:
    kept = {("p", "cafe"): Standing(rated_games=1, rating=1500.2)}
    moved = [Change("p", "cafe", Standing(rated_games=2, rating=1500.7))]
    assert bucket_moves(kept, moved) == {("cafe", 1, 96012): -1, ("cafe", 1, 96044): 1}
    new = [Change("q", "cafe", Standing(rated_games=1, rating=1499.5))]
    assert bucket_moves({}, new) == {("cafe", 0, 1499): 1, ("cafe", 1, 95968): 1}


async def test_every_players_rank_is_their_place_in_the_full_order(fresh_dsn: str) -> None:
    rng = random.Random(3)
    # Ties on rating, and on rating and rated games (then by id).
    rows = [(f"p-{i:03d}", rng.choice(RATINGS), rng.randint(1, 3)) for i in range(240)]
    con = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(con)
        await con.executemany(
            "INSERT INTO player_standings (player_id, ruleset, games, wins, streak,"
            " rated_games, rating, deviation, last_game_at)"
            " VALUES ($1, $4, $3, 0, -1, $3, $2, 80, now())",
            [
                *((p, r, g, "cafe") for p, r, g in rows),
                # Not on cafe's board: no rated game there, or only in another rule set.
                ("x-unrated", 1500.5, 0, "cafe"),
                ("x-rami", 1500.5, 2, "rami51"),
            ],
        )
        await con.execute(RECOUNT)
        fine = await con.fetchval(
            "SELECT count(*) FROM rating_buckets WHERE ruleset = 'cafe' AND level = 1"
            " AND bucket / $1 = $2",
            FINE,
            POINT,
        )
        assert fine >= 5, "several fine buckets in the point"
        order = sorted(rows, key=lambda r: (r[1], r[2], r[0]), reverse=True)
        for place, (player, rating, games) in enumerate(order, 1):
            entry = await player_queries.rank(con, player, "cafe")
            assert entry is not None
            assert (entry.rank, entry.rating, entry.rated_games) == (place, rating, games), player
        assert await player_queries.rank(con, "x-unrated", "cafe") is None
    finally:
        await con.close()
