"""A finished game's record, written in the commit that ends it: its result
(`game_results`), each person's part in it with their rating before and after
(`player_games`), and their standing in its rule set (`player_standings`).
PlayerService reads them (`player_queries`); retention leaves them alone.

`record` wraps the ratings' update (the store's, whatever model it uses): it
locks the people's rows and reads their ratings, lets the ratings move, then
writes the record in one statement that reads the ratings the update left.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from services.common.db import Connection

from .rules.rounds import final_places
from .rules.state import GameState, SeatStatus

LOCK_PEOPLE = "SELECT id, rating FROM players WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE"
"""The people's rows, locked in the order the ratings' update locks them (by id):
two games ending at once for a shared player wait for each other here, and each
records the ratings it moved from."""

SEATS = (
    "SELECT seat, player_id, display_name, is_bot FROM table_seats"
    " WHERE table_id = $1 ORDER BY seat"
)

DEVIATION = "(coalesce(to_jsonb(p) ->> 'rating_deviation', to_jsonb(p) ->> 'sigma'))::float8"
"""How sure a player's rating is, where the ratings keep such a column (read by
name, so that this statement runs with or without it); NULL where they do not."""

RECORD = (
    "WITH result AS (INSERT INTO game_results (table_id, ruleset, finished_at, end_reason,"
    " winner_seat, rated, player_ids, names, bots, totals, places, gone)"
    " VALUES ($1, $2, now(), $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    " ON CONFLICT (table_id) DO NOTHING RETURNING table_id, finished_at),"
    " mine AS (SELECT x.player_id, x.seat, x.place, x.won, x.before, p.rating AS after,"
    f" {DEVIATION} AS deviation"
    " FROM unnest($12::text[], $13::smallint[], $14::smallint[], $15::boolean[],"
    " $16::float8[]) AS x(player_id, seat, place, won, before)"
    " LEFT JOIN players p ON p.id = x.player_id),"
    " played AS (INSERT INTO player_games (player_id, finished_at, table_id, seat, place, won,"
    " rating_before, rating_after) SELECT m.player_id, r.finished_at, r.table_id, m.seat,"
    " m.place, m.won, CASE WHEN $5 THEN m.before END, CASE WHEN $5 THEN m.after END"
    " FROM mine m, result r),"
    " standing AS (INSERT INTO player_standings AS s (player_id, ruleset, games, wins, streak,"
    " rated_games, rating, deviation, last_game_at)"
    " SELECT m.player_id, $2, 1, m.won::int, CASE WHEN m.won THEN 1 ELSE -1 END, $5::int,"
    " coalesce(m.after, 1500), m.deviation, r.finished_at FROM mine m, result r"
    " ON CONFLICT (player_id, ruleset) DO UPDATE SET games = s.games + 1,"
    " wins = s.wins + excluded.wins, rated_games = s.rated_games + excluded.rated_games,"
    " streak = CASE WHEN excluded.streak > 0 THEN greatest(s.streak, 0) + 1"
    " ELSE least(s.streak, 0) - 1 END,"
    " rating = excluded.rating, deviation = excluded.deviation,"
    " last_game_at = excluded.last_game_at)"
    " UPDATE player_standings s SET rating = m.after, deviation = m.deviation"
    " FROM mine m, result r"
    " WHERE $5 AND s.player_id = m.player_id AND s.ruleset <> $2"
)
"""The record in one statement, unless the game has one already. A rated game's
new ratings also go to its players' standings in the other rule sets: one rating
serves them all (`services.common.rating`), and the leaderboards order by it."""


async def record(
    con: Connection,
    table_id: uuid.UUID,
    state: GameState,
    *,
    rate: Callable[[], Awaitable[None]],
) -> None:
    """Record the game ``state`` ended, around ``rate`` (the ratings' update, run
    between the two reads). Called once, in the commit that finishes the table."""
    seats = await con.fetch(SEATS, table_id)
    people = [r for r in seats if not r["is_bot"]]
    ids = sorted({r["player_id"] for r in people})
    before = {r["id"]: r["rating"] for r in await con.fetch(LOCK_PEOPLE, ids)}
    await rate()
    # The ratings' own rule (services/game/store.py): every seat a known person, two or more.
    rated = len(seats) >= 2 and len(people) == len(seats) and len(before) == len(ids)
    places = final_places(state)
    winner = state.winner if 0 <= state.winner < state.seats else None
    await con.execute(
        RECORD,
        table_id,
        state.ruleset.name,
        state.end_reason,
        winner,
        rated,
        [r["player_id"] for r in seats],
        [r["display_name"] for r in seats],
        [r["is_bot"] for r in seats],
        [state.totals[r["seat"]] for r in seats],
        [places[r["seat"]] for r in seats],
        [state.status[r["seat"]] != SeatStatus.PLAYING for r in seats],
        [r["player_id"] for r in people],
        [r["seat"] for r in people],
        [places[r["seat"]] for r in people],
        [r["seat"] == winner for r in people],
        [before.get(r["player_id"]) for r in people],
    )
