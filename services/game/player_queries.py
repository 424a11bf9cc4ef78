"""PlayerService's reads: a profile, a player's finished games and a rule set's
leaderboard, from the records a game's end writes (`results`), as typed rows.

Each page is one indexed range read from where the last page ended (keyset
pagination, `page_tokens`): its cost depends on the page, not on how many
games or players there are. A player's rank too: sums over the rating buckets
above theirs at two levels and a count within their own fine one (`standings`).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg

from services.common.db import Connection, Pool

from .standings import FINE

NEWEST = (datetime.max.replace(tzinfo=UTC), uuid.UUID(int=(1 << 128) - 1))
"""A key past every game's (finish time, table id): where the first page starts."""

PROFILE = (
    "SELECT p.id, p.display_name, p.created_at, s.rulesets, s.ratings, s.deviations,"
    " s.rated_games, s.games, s.wins, s.streaks, s.last_games"
    " FROM players p LEFT JOIN LATERAL (SELECT array_agg(ruleset ORDER BY ruleset) AS rulesets,"
    " array_agg(rating ORDER BY ruleset) AS ratings,"
    " array_agg(deviation ORDER BY ruleset) AS deviations,"
    " array_agg(rated_games ORDER BY ruleset) AS rated_games,"
    " array_agg(games ORDER BY ruleset) AS games, array_agg(wins ORDER BY ruleset) AS wins,"
    " array_agg(streak ORDER BY ruleset) AS streaks,"
    " array_agg(last_game_at ORDER BY ruleset) AS last_games"
    " FROM player_standings WHERE player_id = p.id) AS s ON true WHERE p.id = $1"
)
"""A player and their standing in every rule set they finished a game of.
Never the device id: only these columns leave the database."""

RENAME = "UPDATE players SET display_name = $2 WHERE id = $1"

GAMES = (
    "SELECT g.table_id, g.finished_at, g.seat, g.place, g.won, g.rating_before,"
    " g.rating_after, r.ruleset, r.end_reason, r.rated, r.player_ids, r.names, r.bots,"
    " r.totals, r.places, r.gone"
    " FROM player_games g JOIN game_results r ON r.table_id = g.table_id"
    " WHERE g.player_id = $1 AND (g.finished_at, g.table_id) < ($2, $3)"
    " ORDER BY g.finished_at DESC, g.table_id DESC LIMIT $4"
)
"""A page of a player's games, newest first, after the key ($2, $3): the
primary key of player_games read backwards, then each game's result."""

TOP = (
    "SELECT s.player_id, coalesce(p.display_name, '') AS display_name, s.rating,"
    " s.deviation, s.rated_games, s.wins"
    " FROM player_standings s LEFT JOIN players p ON p.id = s.player_id"
    " WHERE s.ruleset = $1 AND s.rated_games > 0"
    " AND (s.rating, s.rated_games, s.player_id) < ($2, $3, $4)"
    " ORDER BY s.rating DESC, s.rated_games DESC, s.player_id DESC LIMIT $5"
)
"""A page of a rule set's leaderboard, after the key ($2, $3, $4): the rank index
(`player_standings_rank_idx`) read in order."""

RANK = (
    "SELECT s.player_id, coalesce(p.display_name, '') AS display_name, s.rating,"
    " s.deviation, s.rated_games, s.wins,"
    " 1 + (SELECT coalesce(sum(b.players), 0) FROM rating_buckets b"
    " WHERE b.ruleset = $2 AND b.level = 0 AND b.bucket > k.whole)"
    " + (SELECT coalesce(sum(b.players), 0) FROM rating_buckets b"
    " WHERE b.ruleset = $2 AND b.level = 1 AND b.bucket > k.fine"
    f" AND b.bucket < (k.whole + 1) * {FINE})"
    " + (SELECT count(*) FROM player_standings o WHERE o.ruleset = $2 AND o.rated_games > 0"
    f" AND o.rating < (k.fine + 1)::float8 / {FINE}"
    " AND (o.rating, o.rated_games, o.player_id) > (s.rating, s.rated_games, s.player_id))"
    " AS rank"
    " FROM player_standings s CROSS JOIN LATERAL (SELECT floor(s.rating)::bigint AS whole,"
    f" floor(s.rating * {FINE})::bigint AS fine) AS k"
    " LEFT JOIN players p ON p.id = s.player_id"
    " WHERE s.player_id = $1 AND s.ruleset = $2 AND s.rated_games > 0"
)
"""A player's entry and rank: one more than the players ahead, counted by the
whole-point buckets above theirs, then by the fine buckets above theirs within
their point (`rating_buckets`, `standings.FINE`), and one by one within their
own fine bucket: a few hundred rows, 63 at most, and a few."""


@dataclass(frozen=True, slots=True)
class Standing:
    ruleset: str
    rating: float
    deviation: float
    rated_games: int
    games: int
    wins: int
    streak: int
    last_game_at: datetime


@dataclass(frozen=True, slots=True)
class Profile:
    player_id: str
    display_name: str
    member_since: datetime
    standings: tuple[Standing, ...]


@dataclass(frozen=True, slots=True)
class Seat:
    player_id: str
    display_name: str
    is_bot: bool
    place: int
    """0 for the winner."""
    total: int
    gone: bool


@dataclass(frozen=True, slots=True)
class PlayedGame:
    table_id: uuid.UUID
    ruleset: str
    finished_at: datetime
    seats: tuple[Seat, ...]
    my_seat: int
    won: bool
    end_reason: str
    rated: bool
    rating_before: float | None
    rating_after: float | None

    @property
    def key(self) -> tuple[datetime, uuid.UUID]:
        return self.finished_at, self.table_id


@dataclass(frozen=True, slots=True)
class Entry:
    """A ranked player of a rule set."""

    player_id: str
    display_name: str
    rating: float
    deviation: float
    rated_games: int
    wins: int
    rank: int


async def profile(con: Connection | Pool, player_id: str) -> Profile | None:
    row = await con.fetchrow(PROFILE, player_id)
    if row is None:
        return None
    names = row["rulesets"] or []
    standings = tuple(
        Standing(
            ruleset=names[i],
            rating=row["ratings"][i],
            deviation=row["deviations"][i] or 0.0,
            rated_games=row["rated_games"][i],
            games=row["games"][i],
            wins=row["wins"][i],
            streak=row["streaks"][i],
            last_game_at=row["last_games"][i],
        )
        for i in range(len(names))
    )
    return Profile(row["id"], row["display_name"], row["created_at"], standings)


async def rename(con: Connection | Pool, player_id: str, name: str) -> bool:
    """Give the player a new display name; False when there is no such player."""
    return str(await con.execute(RENAME, player_id, name)) != "UPDATE 0"


async def games(
    con: Connection | Pool, player_id: str, after: tuple[datetime, uuid.UUID], most: int
) -> list[PlayedGame]:
    """Up to ``most`` of the player's games, newest first, older than ``after``."""
    rows = await con.fetch(GAMES, player_id, after[0], after[1], most)
    return [
        PlayedGame(
            table_id=r["table_id"],
            ruleset=r["ruleset"],
            finished_at=r["finished_at"],
            seats=tuple(
                Seat(pid, name, bot, place, total, gone)
                for pid, name, bot, place, total, gone in zip(
                    r["player_ids"],
                    r["names"],
                    r["bots"],
                    r["places"],
                    r["totals"],
                    r["gone"],
                    strict=True,
                )
            ),
            my_seat=r["seat"],
            won=r["won"],
            end_reason=r["end_reason"],
            rated=r["rated"],
            rating_before=r["rating_before"],
            rating_after=r["rating_after"],
        )
        for r in rows
    ]


async def top(
    con: Connection | Pool,
    ruleset: str,
    after: tuple[float, int, str],
    most: int,
    *,
    rank_before: int,
) -> list[Entry]:
    """Up to ``most`` entries of the leaderboard after ``after`` (the last entry of
    the page before, whose rank was ``rank_before``)."""
    rows = await con.fetch(TOP, ruleset, after[0], after[1], after[2], most)
    return [_entry(r, rank_before + 1 + i) for i, r in enumerate(rows)]


async def rank(con: Connection | Pool, player_id: str, ruleset: str) -> Entry | None:
    """The player's entry in the rule set's leaderboard; None when not ranked there."""
    row = await con.fetchrow(RANK, player_id, ruleset)
    return None if row is None else _entry(row, row["rank"])


def _entry(row: asyncpg.Record, rank: int) -> Entry:
    return Entry(
        player_id=row["player_id"],
        display_name=row["display_name"],
        rating=row["rating"],
        deviation=row["deviation"] or 0.0,
        rated_games=row["rated_games"],
        wins=row["wins"],
        rank=rank,
    )
