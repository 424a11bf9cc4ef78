"""A finished game's record, written in the commit that ends it: its result
(`game_results`), each person's part in it with their rating before and after
(`player_games`), their standing in its rule set (`player_standings`, where the
rule set's rating is kept) and the leaderboards' rating buckets at both levels
(`standings`). PlayerService reads them (`player_queries`); retention leaves
them alone.

A rating is a rule set's own: a game moves its players' ratings in its rule set
and nowhere else. A player's rating in a rule set they have not played yet
starts from the one carried over for them (`players.rating`, the single rating
kept before ratings were per rule set; 1500 for anyone newer).

`record` locks the people's `players` rows (by id), reads their ratings in the
game's rule set, works out the new ones for a rated game (`is_rated`) and writes
the record in one statement. Every change of a standing happens under its
player's row lock, so two games a player finishes at once are recorded one
after the other, the second from the first's result.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import asyncpg

from services.common import rating
from services.common.db import Connection, Statement

from .rules.events import EndReason
from .rules.rounds import final_places
from .rules.state import GameState, SeatStatus
from .standings import Seated, Standing, bucket_moves, changes

RATINGS = Statement(
    "SELECT p.id, coalesce(s.rating, p.rating) AS rating,"
    " coalesce(s.deviation, p.rating_deviation) AS deviation"
    " FROM players p LEFT JOIN player_standings s"
    " ON s.player_id = p.id AND s.ruleset = :ruleset"
    " WHERE p.id = ANY(:player_ids::text[]) ORDER BY p.id FOR UPDATE OF p"
)
"""Each person's rating in the rule set (their standing's, else the one carried
over), their `players` row locked until the commit, in one order: two games a
player ends at once (one they left, one they sat down at since) are recorded one
after the other and never deadlock on each other."""

SEATS = (
    "SELECT seat, player_id, display_name, is_bot FROM table_seats"
    " WHERE table_id = $1 ORDER BY seat"
)

KEPT = (
    "SELECT player_id, games, wins, streak, rated_games, rating, deviation, last_game_at"
    " FROM player_standings WHERE player_id = ANY($1::text[]) AND ruleset = $2"
)
"""The people's standings in the rule set, read under their row locks."""

RECORD = Statement(
    "WITH result AS (INSERT INTO game_results (table_id, ruleset, finished_at, end_reason,"
    " winner_seat, rated, player_ids, names, bots, totals, places, gone)"
    " VALUES (:table_id, :ruleset, now(), :end_reason, :winner_seat, :rated, :player_ids,"
    " :names, :bots, :totals, :places, :gone)"
    " ON CONFLICT (table_id) DO NOTHING RETURNING table_id, ruleset, finished_at),"
    " played AS (INSERT INTO player_games (player_id, finished_at, table_id, seat, place, won,"
    " rating_before, rating_after) SELECT x.player_id, r.finished_at, r.table_id, x.seat,"
    " x.place, x.won, x.before, x.after FROM result r,"
    " unnest(:people::text[], :people_seats::smallint[], :people_places::smallint[],"
    " :people_won::boolean[], :ratings_before::float8[], :ratings_after::float8[])"
    " AS x(player_id, seat, place, won, before, after)),"
    " standing AS (INSERT INTO player_standings AS s (player_id, ruleset, games, wins, streak,"
    " rated_games, rating, deviation, last_game_at) SELECT x.player_id, r.ruleset, x.games,"
    " x.wins, x.streak, x.rated_games, x.rating, x.deviation, r.finished_at"
    " FROM result r, unnest(:standing_players::text[], :games::int[], :wins::int[],"
    " :streaks::int[], :rated_games::int[], :standing_ratings::float8[],"
    " :standing_deviations::float8[])"
    " AS x(player_id, games, wins, streak, rated_games, rating, deviation)"
    " ON CONFLICT (player_id, ruleset) DO UPDATE SET games = excluded.games,"
    " wins = excluded.wins, streak = excluded.streak, rated_games = excluded.rated_games,"
    " rating = excluded.rating, deviation = excluded.deviation,"
    " last_game_at = excluded.last_game_at),"
    " counted AS (INSERT INTO rating_buckets AS b (ruleset, level, bucket, players)"
    " SELECT x.ruleset, x.level, x.bucket, x.moved FROM result,"
    " unnest(:bucket_rulesets::text[], :bucket_levels::smallint[], :buckets::bigint[],"
    " :bucket_moves::int[]) AS x(ruleset, level, bucket, moved)"
    " ORDER BY x.ruleset, x.level, x.bucket"
    " ON CONFLICT (ruleset, level, bucket) DO UPDATE SET players = b.players + excluded.players)"
    " SELECT count(*) FROM result"
)
"""The record in one statement, unless the game has one already. The buckets of
both levels are written in one order (by rule set, level, then bucket): two
games ending at once with no player in common wait for each other there, never
deadlock."""


def is_rated(state: GameState, seats: Sequence[asyncpg.Record], known: int) -> bool:
    """A game moves its players' ratings when every seat is a person the server
    knows, two or more: a table with bots is a training table (bots have no
    rating to win from), and a game its operators ended (`EndTable`) rates nobody,
    as nobody won it."""
    return (
        state.end_reason != EndReason.ENDED_BY_OPERATOR
        and len(seats) >= 2
        and not any(r["is_bot"] for r in seats)
        and known == len({r["player_id"] for r in seats})
    )


async def record(con: Connection, table_id: uuid.UUID, state: GameState) -> None:
    """Record the game ``state`` ended, with its ratings' changes. Called once, in
    the commit that finishes the table."""
    ruleset = state.ruleset.name
    seats = await con.fetch(SEATS, table_id)
    people = [r for r in seats if not r["is_bot"]]
    ids = sorted({r["player_id"] for r in people})
    start = {
        r["id"]: rating.Rating(r["rating"], r["deviation"])
        for r in await RATINGS.fetch(con, ruleset=ruleset, player_ids=ids)
    }
    kept = {
        (row["player_id"], ruleset): Standing(
            row["games"],
            row["wins"],
            row["streak"],
            row["rated_games"],
            row["rating"],
            row["deviation"],
            row["last_game_at"],
        )
        for row in await con.fetch(KEPT, ids, ruleset)
    }
    places = final_places(state)
    rated = is_rated(state, seats, len(start))
    moved: dict[str, rating.Rating] = {}
    if rated:
        new = rating.updated(
            [start[r["player_id"]] for r in people], [places[r["seat"]] for r in people]
        )
        moved = {r["player_id"]: after for r, after in zip(people, new, strict=True)}
    winner = state.winner if 0 <= state.winner < state.seats else None
    newcomer = rating.Rating(rating.DEFAULT_RATING, rating.DEFAULT_DEVIATION)
    seated = [
        Seated(
            r["player_id"],
            r["seat"] == winner,
            start.get(r["player_id"], newcomer),
            moved.get(r["player_id"]),
        )
        for r in people
    ]
    made = changes(kept, ruleset, seated)
    moves = bucket_moves(kept, made)
    await RECORD.execute(
        con,
        table_id=table_id,
        ruleset=ruleset,
        end_reason=state.end_reason,
        winner_seat=winner,
        rated=rated,
        player_ids=[r["player_id"] for r in seats],
        names=[r["display_name"] for r in seats],
        bots=[r["is_bot"] for r in seats],
        totals=[state.totals[r["seat"]] for r in seats],
        places=[places[r["seat"]] for r in seats],
        gone=[state.status[r["seat"]] != SeatStatus.PLAYING for r in seats],
        people=[r["player_id"] for r in people],
        people_seats=[r["seat"] for r in people],
        people_places=[places[r["seat"]] for r in people],
        people_won=[r["seat"] == winner for r in people],
        ratings_before=[start[r["player_id"]].mu if rated else None for r in people],
        ratings_after=[moved[r["player_id"]].mu if rated else None for r in people],
        standing_players=[c.player_id for c in made],
        games=[c.standing.games for c in made],
        wins=[c.standing.wins for c in made],
        streaks=[c.standing.streak for c in made],
        rated_games=[c.standing.rated_games for c in made],
        standing_ratings=[c.standing.rating for c in made],
        standing_deviations=[c.standing.deviation for c in made],
        bucket_rulesets=[key[0] for key in moves],
        bucket_levels=[key[1] for key in moves],
        buckets=[key[2] for key in moves],
        bucket_moves=list(moves.values()),
    )
