"""Rated queues read each player's rating and its deviation into the ticket: an
unsure rating (a newcomer's) is matched more widely than a settled one."""

from __future__ import annotations

import pytest

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.rating import DEFAULT_DEVIATION, SETTLED_DEVIATION

from .harness import backend, enqueue, players, store


@pytest.mark.parametrize(
    ("deviation", "seated"),
    [(DEFAULT_DEVIATION, True), (SETTLED_DEVIATION, False)],
    ids=["newcomer", "settled"],
)
async def test_a_rated_ticket_takes_its_players_deviation(
    fresh_dsn: str, deviation: float, seated: bool
) -> None:
    """Two players 300 points apart, queued one way and the other (at once, and
    replacing a ticket): seated together at once only while one's rating is unsure
    enough for the gap."""
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        first, second = await players(b.channel(), 2)
        await db.con.execute(
            "UPDATE players SET rating = 1500, rating_deviation = $2 WHERE id = $1",
            first.player_id,
            deviation,
        )
        await db.con.execute(
            "UPDATE players SET rating = 1800, rating_deviation = $2 WHERE id = $1",
            second.player_id,
            SETTLED_DEVIATION,
        )
        one = await enqueue(first, table_size=2, mode=mm.MATCH_MODE_RATING)
        two = await enqueue(second, table_size=2, mode=mm.MATCH_MODE_RATING, replace_existing=True)
        rows = [await db.ticket(w.ticket.ticket_id) for w in (one, two)]
        assert [(r["rating"], r["rating_deviation"]) for r in rows] == [
            (1500.0, deviation),
            (1800.0, SETTLED_DEVIATION),
        ]
        plans = await b.matcher().claim()
        assert len(plans) == (1 if seated else 0)


async def test_a_rated_ticket_takes_the_rating_of_its_rule_set(fresh_dsn: str) -> None:
    """A rating is a rule set's own: a rami51 ticket carries the player's rami51
    standing, a cafe ticket the rating carried over for a rule set not yet played."""
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        [player] = await players(b.channel(), 1)
        await db.con.execute(
            "UPDATE players SET rating = 1450, rating_deviation = 150 WHERE id = $1",
            player.player_id,
        )
        await db.con.execute(
            "INSERT INTO player_standings (player_id, ruleset, games, wins, streak,"
            " rated_games, rating, deviation, last_game_at)"
            " VALUES ($1, 'rami51', 9, 6, 2, 9, 1710, 70, now())",
            player.player_id,
        )
        rami51 = await enqueue(player, table_size=2, ruleset="rami51", mode=mm.MATCH_MODE_RATING)
        cafe = await enqueue(
            player, table_size=2, ruleset="cafe", mode=mm.MATCH_MODE_RATING, replace_existing=True
        )
        rows = [await db.ticket(w.ticket.ticket_id) for w in (rami51, cafe)]
        assert [(r["rating"], r["rating_deviation"]) for r in rows] == [
            (1710.0, 70.0),
            (1450.0, 150.0),
        ]
