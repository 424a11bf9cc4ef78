"""A finished game's record, written in the commit that ends it: its result
(`game_results`), each person's part in it with their rating before and after
(`player_games`), their standing in its rule set (`player_standings`) and the
leaderboards' rating buckets (`standings`). PlayerService reads them
(`player_queries`); retention leaves them alone.

`record` wraps the ratings' update (the store's, whatever model and rule it
uses): it locks the people's rows and reads their ratings, lets the ratings
move, reads the ratings and standings the update left, and writes the record in
one statement; a game is rated when its players' ratings moved. Every change of
a standing happens under its player's row lock, so two games a player finishes
at once are recorded one after the other.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from services.common.db import Connection, Statement

from .rules.rounds import final_places
from .rules.state import GameState, SeatStatus
from .standings import Seated, Standing, bucket_moves, changes

DEVIATION = "(coalesce(to_jsonb(p) ->> 'rating_deviation', to_jsonb(p) ->> 'sigma'))::float8"
"""How sure a player's rating is, where the ratings keep such a column (read by
name, so that the statement runs with or without one); NULL where they do not."""

LOCK_PEOPLE = (
    "SELECT p.id, p.rating, " + DEVIATION + " AS deviation FROM players p"
    " WHERE p.id = ANY($1::text[]) ORDER BY p.id FOR UPDATE"
)
"""The people's rows, locked in the order the ratings' update locks them (by id)."""

SEATS = (
    "SELECT seat, player_id, display_name, is_bot FROM table_seats"
    " WHERE table_id = $1 ORDER BY seat"
)

KEPT = (
    "SELECT k.id, p.rating AS now_rating, "
    + DEVIATION
    + " AS now_deviation, s.ruleset, s.games, s.wins, s.streak, s.rated_games, s.rating,"
    " s.deviation, s.last_game_at"
    " FROM unnest($1::text[]) AS k(id) LEFT JOIN players p ON p.id = k.id"
    " LEFT JOIN player_standings s ON s.player_id = k.id"
)
"""Each person's rating now (after the ratings' update) and their standings."""

RECORD = Statement(
    "WITH result AS (INSERT INTO game_results (table_id, ruleset, finished_at, end_reason,"
    " winner_seat, rated, player_ids, names, bots, totals, places, gone)"
    " VALUES (:table_id, :ruleset, now(), :end_reason, :winner_seat, :rated, :player_ids,"
    " :names, :bots, :totals, :places, :gone)"
    " ON CONFLICT (table_id) DO NOTHING RETURNING table_id, finished_at),"
    " played AS (INSERT INTO player_games (player_id, finished_at, table_id, seat, place, won,"
    " rating_before, rating_after) SELECT x.player_id, r.finished_at, r.table_id, x.seat,"
    " x.place, x.won, x.before, x.after FROM result r,"
    " unnest(:people::text[], :people_seats::smallint[], :people_places::smallint[],"
    " :people_won::boolean[], :ratings_before::float8[], :ratings_after::float8[])"
    " AS x(player_id, seat, place, won, before, after)),"
    " standing AS (INSERT INTO player_standings AS s (player_id, ruleset, games, wins, streak,"
    " rated_games, rating, deviation, last_game_at) SELECT x.player_id, x.ruleset, x.games,"
    " x.wins, x.streak, x.rated_games, x.rating, x.deviation,"
    " CASE WHEN x.played THEN r.finished_at ELSE x.kept_at END"
    " FROM result r, unnest(:standing_players::text[], :standing_rulesets::text[],"
    " :games::int[], :wins::int[], :streaks::int[], :rated_games::int[],"
    " :standing_ratings::float8[], :standing_deviations::float8[], :played::boolean[],"
    " :kept_at::timestamptz[])"
    " AS x(player_id, ruleset, games, wins, streak, rated_games, rating, deviation, played,"
    " kept_at)"
    " ON CONFLICT (player_id, ruleset) DO UPDATE SET games = excluded.games,"
    " wins = excluded.wins, streak = excluded.streak, rated_games = excluded.rated_games,"
    " rating = excluded.rating, deviation = excluded.deviation,"
    " last_game_at = excluded.last_game_at),"
    " counted AS (INSERT INTO rating_buckets AS b (ruleset, bucket, players)"
    " SELECT x.ruleset, x.bucket, x.moved FROM result,"
    " unnest(:bucket_rulesets::text[], :buckets::bigint[], :bucket_moves::int[])"
    " AS x(ruleset, bucket, moved)"
    " ORDER BY x.ruleset, x.bucket"
    " ON CONFLICT (ruleset, bucket) DO UPDATE SET players = b.players + excluded.players)"
    " SELECT count(*) FROM result"
)
"""The record in one statement, unless the game has one already. The buckets are
written in one order (by rule set, then bucket): two games ending at once with
no player in common wait for each other there, never deadlock."""


async def record(
    con: Connection,
    table_id: uuid.UUID,
    state: GameState,
    *,
    rate: Callable[[], Awaitable[None]],
) -> None:
    """Record the game ``state`` ended, around ``rate`` (the ratings' update, run
    between the reads). Called once, in the commit that finishes the table."""
    seats = await con.fetch(SEATS, table_id)
    people = [r for r in seats if not r["is_bot"]]
    ids = sorted({r["player_id"] for r in people})
    locked = await con.fetch(LOCK_PEOPLE, ids)
    before = {r["id"]: r["rating"] for r in locked}
    await rate()
    now: dict[str, tuple[float | None, float | None]] = {}
    kept: dict[tuple[str, str], Standing] = {}
    for row in await con.fetch(KEPT, ids):
        now[row["id"]] = (row["now_rating"], row["now_deviation"])
        if row["ruleset"] is not None:
            kept[row["id"], row["ruleset"]] = Standing(
                row["games"],
                row["wins"],
                row["streak"],
                row["rated_games"],
                row["rating"],
                row["deviation"],
                row["last_game_at"],
            )
    # Rated: the ratings' update moved them (whatever its rule: every seat a known
    # person, two or more, and not ended by the operators). Nothing else moves them
    # while their rows are locked.
    rated = any(now.get(r["id"]) != (r["rating"], r["deviation"]) for r in locked)
    places = final_places(state)
    winner = state.winner if 0 <= state.winner < state.seats else None
    ruleset = state.ruleset.name
    seated = [
        Seated(r["player_id"], r["seat"] == winner, *now.get(r["player_id"], (None, None)))
        for r in people
    ]
    made = changes(kept, ruleset, seated, rated=rated)
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
        ratings_before=[before.get(r["player_id"]) if rated else None for r in people],
        ratings_after=[now.get(r["player_id"], (None, None))[0] if rated else None for r in people],
        standing_players=[c.player_id for c in made],
        standing_rulesets=[c.ruleset for c in made],
        games=[c.standing.games for c in made],
        wins=[c.standing.wins for c in made],
        streaks=[c.standing.streak for c in made],
        rated_games=[c.standing.rated_games for c in made],
        standing_ratings=[c.standing.rating for c in made],
        standing_deviations=[c.standing.deviation for c in made],
        played=[c.played for c in made],
        kept_at=[c.standing.last_game_at for c in made],
        bucket_rulesets=[key[0] for key in moves],
        buckets=[key[1] for key in moves],
        bucket_moves=list(moves.values()),
    )
