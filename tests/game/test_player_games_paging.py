"""ListGames pages by position, not offset: games ending while a player pages
through their history never make a game show twice or go missing."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import grpc

from services.common.pb.rummy.v1 import player_pb2
from services.common.wire.reasons import ServiceReason

from .harness import login, refused
from .player_calls import ask

START = datetime(2026, 11, 1, tzinfo=UTC)
MOST_PAGES = 40
"""Far more than the history under test takes (it grows by at most two behind
the reader a page, and a page is seven): past it, paging would never end."""


async def _finished(con: asyncpg.Connection, player_id: str, at: datetime) -> str:
    """A game the player finished at ``at`` (with an opponent), as a game's end records it."""
    table_id = uuid.uuid4()
    await con.execute(
        "INSERT INTO game_results (table_id, ruleset, finished_at, end_reason, winner_seat,"
        " rated, player_ids, names, bots, totals, places, gone) VALUES ($1, 'cafe', $2,"
        " 'went_out', 0, true, ARRAY[$3, 'p-other'], ARRAY['Me', 'Other'],"
        " ARRAY[false, false], ARRAY[0, 30], ARRAY[0, 1]::smallint[], ARRAY[false, false])",
        table_id,
        at,
        player_id,
    )
    await con.execute(
        "INSERT INTO player_games (player_id, finished_at, table_id, seat, place, won,"
        " rating_before, rating_after) VALUES ($1, $2, $3, 0, 0, true, 1500, 1516)",
        player_id,
        at,
        table_id,
    )
    return str(table_id)


async def test_paging_while_games_end_skips_and_repeats_nothing(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    player = await login(channel, "Pat")
    con = await asyncpg.connect(fresh_dsn)
    try:
        # 60 games, in threes finished at the very same instant: ties on the time.
        kept = [
            await _finished(con, player.player_id, START + timedelta(minutes=i // 3))
            for i in range(60)
        ]
        seen: list[player_pb2.PlayedGame] = []
        added: list[str] = []
        token = ""
        while True:
            page = await ask(
                player, "ListGames", player_pb2.ListGamesRequest(page_size=7, page_token=token)
            )
            seen.extend(page.games)
            token = page.next_page_token
            if not token:
                break
            # Meanwhile games end: newer ones (every game's end is), and one at an
            # instant some listed games share (a commit that took its time).
            for _ in range(3):
                added.append(await _finished(con, player.player_id, datetime.now(UTC)))
            tie = START + timedelta(minutes=len(seen) % 20)
            added.append(await _finished(con, player.player_id, tie))
    finally:
        await con.close()
    ids = [g.table_id for g in seen]
    assert len(ids) == len(set(ids)), "no game twice"
    assert set(kept) <= set(ids), "no game that was there all along is missing"
    assert set(ids) <= set(kept) | set(added)
    keys = [(g.finished_at.ToDatetime(), uuid.UUID(g.table_id)) for g in seen]
    assert keys == sorted(keys, reverse=True), "newest first, ties by table id"
    assert all(g.rating_change == 16.0 for g in seen)


async def _games_end(con: asyncpg.Connection, player_id: str, at: datetime) -> list[str]:
    """Two games of the player end, each in one commit as a game's end writes it:
    one now, and one at ``at`` (an instant listed games share: a commit that took
    its time)."""
    ended = []
    for when in (datetime.now(UTC), at):
        async with con.transaction():
            ended.append(await _finished(con, player_id, when))
    return ended


async def test_paging_while_games_end_concurrently_skips_and_repeats_nothing(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """Games end during each page's read, not only between pages: every game that
    had ended when paging began is listed once, and no game twice."""
    player = await login(channel, "Pia")
    con = await asyncpg.connect(fresh_dsn)
    try:
        kept = [
            await _finished(con, player.player_id, START + timedelta(minutes=i // 3))
            for i in range(60)
        ]
    finally:
        await con.close()
    seen: list[player_pb2.PlayedGame] = []
    added: list[str] = []
    at = START + timedelta(minutes=19)
    token = ""
    con = await asyncpg.connect(fresh_dsn)
    try:
        for _ in range(MOST_PAGES):
            ending = asyncio.create_task(_games_end(con, player.player_id, at))
            page = await ask(
                player, "ListGames", player_pb2.ListGamesRequest(page_size=7, page_token=token)
            )
            added.extend(await ending)
            seen.extend(page.games)
            token = page.next_page_token
            if not token:
                break
            at = page.games[-1].finished_at.ToDatetime(tzinfo=UTC)
        else:
            raise AssertionError(f"still paging after {MOST_PAGES} pages")
    finally:
        await con.close()
    ids = [g.table_id for g in seen]
    assert len(ids) == len(set(ids)), "no game twice"
    assert set(kept) <= set(ids), "no game that had ended when paging began is missing"
    assert set(ids) <= set(kept) | set(added)
    keys = [(g.finished_at.ToDatetime(), uuid.UUID(g.table_id)) for g in seen]
    assert keys == sorted(keys, reverse=True), "newest first, ties by table id"


async def test_a_history_is_the_callers_own(channel: grpc.aio.Channel, fresh_dsn: str) -> None:
    """Another player's page token is no token of the caller's list."""
    ann, ben = await login(channel, "Ann"), await login(channel, "Ben")
    con = await asyncpg.connect(fresh_dsn)
    try:
        for i in range(3):
            await _finished(con, ann.player_id, START + timedelta(minutes=i))
    finally:
        await con.close()
    page = await ask(ann, "ListGames", player_pb2.ListGamesRequest(page_size=2))
    assert len(page.games) == 2 and page.next_page_token
    assert not (await ask(ben, "ListGames", player_pb2.ListGamesRequest())).games
    assert await refused(
        ask(ben, "ListGames", player_pb2.ListGamesRequest(page_token=page.next_page_token))
    ) == (grpc.StatusCode.INVALID_ARGUMENT, ServiceReason.PAGE_TOKEN_INVALID)
