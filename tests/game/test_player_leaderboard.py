"""A rule set's leaderboard: rated players only, in the documented order (rating,
then rated games, then player id, all descending), one rank each, paged without
a gap or a repeat, and the caller's own rank."""

from __future__ import annotations

import asyncio
import random
import time
from itertools import pairwise

import asyncpg
import grpc

from services.common.auth import issue_token
from services.common.pb.rummy.v1 import player_pb2
from services.game.standings import buckets

from .harness import SECRET, Player, login
from .player_calls import RECOUNT, ask

Key = tuple[float, int, str]
"""A board entry's place in the order: (rating, rated games, player id)."""
SEEDED = 50
"""Players ranked before paging begins: seven pages of seven and one more."""
MOST_PAGES = 40
"""Far more than the board under test takes (it grows by at most four below the
reader a page, and a page is seven): past it, paging would never end."""

# (player id, rating, rated games): ties on rating, and on rating and games.
BOARD = [
    ("p-a", 1600.0, 3),
    ("p-b", 1550.0, 2),
    ("p-c", 1550.0, 5),
    ("p-d", 1550.0, 2),
    ("p-e", 1500.0, 1),
    ("p-f", 1480.5, 9),
    ("p-g", 1480.5, 9),
]
RANKED = ["p-a", "p-c", "p-d", "p-b", "p-e", "p-g", "p-f"]
"""The order the rule says: 1600; then 1550 with 5 games before the two with 2,
which go by id, descending (d before b); 1500; then two equal in both, by id."""


async def _seed(dsn: str, caller: str) -> None:
    con = await asyncpg.connect(dsn)
    try:
        rows = [*BOARD, (caller, 1490.0, 1)]
        await con.executemany(
            "INSERT INTO players (id, display_name, rating) VALUES ($1, upper($1), $2)"
            " ON CONFLICT (id) DO UPDATE SET rating = excluded.rating",
            [(p, r) for p, r, _ in rows],
        )
        await con.executemany(
            "INSERT INTO player_standings (player_id, ruleset, games, wins, streak,"
            " rated_games, rating, deviation, last_game_at)"
            " VALUES ($1, 'cafe', $3 + 1, 1, 1, $3, $2, 250 - 10 * $3, now())",
            rows,
        )
        # Not ranked: no rated game in cafe, or only in another rule set.
        await con.execute(
            "INSERT INTO player_standings (player_id, ruleset, games, wins, streak,"
            " rated_games, rating, deviation, last_game_at)"
            " VALUES ('p-x', 'cafe', 4, 4, 4, 0, 9999, 60, now()),"
            " ('p-y', 'rami51', 4, 4, 4, 4, 9999, 60, now())"
        )
        await con.execute(RECOUNT)
    finally:
        await con.close()


async def test_ties_are_ordered_by_the_documented_rule(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    caller = await login(channel, "Zed")
    await _seed(fresh_dsn, caller.player_id)
    expected = [*RANKED[:5], caller.player_id, *RANKED[5:]]
    board = await ask(caller, "GetLeaderboard", player_pb2.GetLeaderboardRequest(ruleset="cafe"))
    assert [e.player_id for e in board.entries] == expected
    assert [e.rank for e in board.entries] == list(range(1, len(expected) + 1))
    assert not board.next_page_token
    assert board.me.player_id == caller.player_id
    assert board.me.rank == 6
    assert board.me.display_name == "Zed"
    top = board.entries[0]
    assert (top.display_name, top.rating, top.rated_games, top.deviation) == (
        "P-A",
        1600.0,
        3,
        220.0,
    )


async def test_pages_of_the_leaderboard_join_up_with_their_ranks(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    caller = await login(channel, "Yan")
    await _seed(fresh_dsn, caller.player_id)
    whole = await ask(caller, "GetLeaderboard", player_pb2.GetLeaderboardRequest())
    entries: list[player_pb2.LeaderboardEntry] = []
    token = ""
    pages = 0
    while True:
        page = await ask(
            caller,
            "GetLeaderboard",
            player_pb2.GetLeaderboardRequest(page_size=3, page_token=token),
        )
        assert page.ruleset == "cafe"
        assert page.HasField("me") == (not token), "the caller's rank on the first page only"
        entries.extend(page.entries)
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert pages == 3
    assert entries == list(whole.entries)


async def test_a_caller_without_a_rated_game_has_no_rank(channel: grpc.aio.Channel) -> None:
    caller = await login(channel, "New")
    board = await ask(caller, "GetLeaderboard", player_pb2.GetLeaderboardRequest(ruleset="rami51"))
    assert board.ruleset == "rami51"
    assert not board.entries and not board.HasField("me")


async def test_every_players_rank_is_their_place_in_the_board(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """Ranks from the rating buckets agree with the board's order, ties, equal
    buckets and fractions included."""
    rng = random.Random(5)
    rows = [
        (
            f"p-{i:03d}",
            rng.choice([1500.0, 1500.5, 1499.999, 1512.25]) + rng.randint(-3, 3),
            rng.randint(1, 3),
        )
        for i in range(120)
    ]
    con = await asyncpg.connect(fresh_dsn)
    try:
        await rank_in_cafe(con, [(r, g, p) for p, r, g in rows], deviation=80)
        await con.execute(RECOUNT)
    finally:
        await con.close()
    viewer = await login(channel, "Viewer")
    board: list[player_pb2.LeaderboardEntry] = []
    token = ""
    while True:
        page = await ask(
            viewer,
            "GetLeaderboard",
            player_pb2.GetLeaderboardRequest(page_size=50, page_token=token),
        )
        board.extend(page.entries)
        token = page.next_page_token
        if not token:
            break
    expected = sorted(rows, key=lambda r: (r[1], r[2], r[0]), reverse=True)
    assert [e.player_id for e in board] == [p for p, _, _ in expected]
    for entry in board[::7]:
        player = Player(
            channel,
            issue_token(entry.player_id, secret=SECRET, now=time.time()),
            entry.player_id,
            "",
        )
        mine = await ask(player, "GetLeaderboard", player_pb2.GetLeaderboardRequest())
        assert mine.me == entry


async def rank_in_cafe(con: asyncpg.Connection, keys: list[Key], deviation: float) -> None:
    """Players with a ranked cafe standing at each (rating, rated games, id), as
    a game's end leaves them (their buckets are for the caller to count)."""
    await con.executemany(
        "INSERT INTO players (id, display_name, rating) VALUES ($1, $1, $2)",
        [(p, r) for r, _, p in keys],
    )
    await con.executemany(
        "INSERT INTO player_standings (player_id, ruleset, games, wins, streak,"
        " rated_games, rating, deviation, last_game_at)"
        " VALUES ($3, 'cafe', $2, 0, -1, $2, $1, $4, now())",
        [(r, g, p, deviation) for r, g, p in keys],
    )


async def _games_end(con: asyncpg.Connection, at: Key, n: int) -> list[Key]:
    """Two games of two end, one after the other, as a game's end writes them
    (each player's standing, then the buckets they join, in bucket order): they
    bring in players above where a reader of the board is (``at``), below it,
    and level with its rating on either side."""
    rating, games, player = at
    ended: list[Key] = []
    for game in (
        [(rating + 0.75, games, f"u-{n:03d}"), (rating - 0.75, games, f"d-{n:03d}")],
        [(rating, games, f"{player}.{n:03d}"), (rating, max(1, games - 1), f"l-{n:03d}")],
    ):
        async with con.transaction():
            await rank_in_cafe(con, game, deviation=100)
            await con.executemany(
                "INSERT INTO rating_buckets AS b (ruleset, level, bucket, players)"
                " VALUES ('cafe', $1, $2, 1)"
                " ON CONFLICT (ruleset, level, bucket) DO UPDATE SET players = b.players + 1",
                sorted(key for r, _, _ in game for key in buckets(r)),
            )
        ended.extend(game)
    return ended


async def test_paging_while_games_end_skips_and_repeats_no_player(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """Games end while the board is paged through, two racing with each page's
    read and two more between pages: every player ranked when paging began shows
    up once, as does every player who was below the reader's place when a page
    was asked for; no player shows up twice; the board's order holds across
    pages, and ranks only go up."""
    rng = random.Random(29)
    seeded: list[Key] = [
        (
            rng.choice([1400.0, 1450.5, 1499.75, 1500.0]) + rng.randint(-2, 2),
            rng.randint(1, 4),
            f"p-{i:03d}",
        )
        for i in range(SEEDED)
    ]
    con = await asyncpg.connect(fresh_dsn)
    try:
        await rank_in_cafe(con, seeded, deviation=90)
        await con.execute(RECOUNT)
    finally:
        await con.close()
    viewer = await login(channel, "Viewer")
    listed: list[player_pb2.LeaderboardEntry] = []
    added: list[Key] = []
    owed: set[str] = set()  # who was below the reader's place before a page was asked for
    at = max(seeded)
    token = ""
    con = await asyncpg.connect(fresh_dsn)
    try:
        for _ in range(MOST_PAGES):
            ending = asyncio.create_task(_games_end(con, at, len(added)))
            page = await ask(
                viewer,
                "GetLeaderboard",
                player_pb2.GetLeaderboardRequest(ruleset="cafe", page_size=7, page_token=token),
            )
            added.extend(await ending)
            listed.extend(page.entries)
            token = page.next_page_token
            if not token:
                break
            last = page.entries[-1]
            at = (last.rating, last.rated_games, last.player_id)
            # And two more between this page and the next, around its last entry.
            added.extend(await _games_end(con, at, len(added)))
            owed |= {p for r, g, p in added if (r, g, p) < at}
        else:
            raise AssertionError(f"still paging after {MOST_PAGES} pages")
    finally:
        await con.close()
    ids = [e.player_id for e in listed]
    assert len(ids) == len(set(ids)), "no player twice"
    assert {p for _, _, p in seeded} <= set(ids), "no player ranked all along is missing"
    assert owed <= set(ids), "no player below the reader's place is missing"
    assert set(ids) <= {p for _, _, p in [*seeded, *added]}
    keys = [(e.rating, e.rated_games, e.player_id) for e in listed]
    assert all(a > b for a, b in pairwise(keys)), "the board's order"
    ranks = [e.rank for e in listed]
    assert ranks[0] == 1
    assert all(a < b for a, b in pairwise(ranks)), "ranks only go up"
    # A rank is at least the player's place among those ranked before paging
    # began, and at most their place among everyone ranked by its end.
    before = {p: i for i, (_, _, p) in enumerate(sorted(seeded, reverse=True), 1)}
    after = {p: i for i, (_, _, p) in enumerate(sorted([*seeded, *added], reverse=True), 1)}
    for entry in listed:
        assert before.get(entry.player_id, 1) <= entry.rank <= after[entry.player_id]
    assert owed - {p for _, _, p in seeded}, "players came in below the reader and were listed"
