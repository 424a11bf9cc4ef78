"""The bot level a person picks travels with the ticket to the table: queues and
private tables store it, a training table seats only players who asked for the
same level, the game service's table shows it on every bot seat, and a level
the server does not know is refused."""

from __future__ import annotations

import asyncio

import grpc

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker.matching import Waiting, form_tables
from tests.game.harness import Player

from .harness import backend, enqueue, host, join, on, players, refusal, store, stub


async def _bot_levels(player: Player, match: mm.Match) -> list[int]:
    async with grpc.aio.insecure_channel(match.game_target) as game:
        reply = await on(player, game).call(
            "GetTable", game_pb2.GetTableRequest(table_id=match.table_id)
        )
    return [s.bot_level for s in reply.view.seats]


async def test_a_quick_match_with_bots_plays_them_at_the_level_asked_for(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        waiter = await enqueue(
            alice, table_size=3, fill_with_bots_after_ms=100, bot_level=table_pb2.BOT_LEVEL_EASY
        )
        assert waiter.ticket.bot_level == table_pb2.BOT_LEVEL_EASY
        assert (await db.ticket(waiter.ticket_id))["bot_level"] == "easy"
        await waiter.end()
        assert waiter.match is not None
        unspecified, easy = table_pb2.BOT_LEVEL_UNSPECIFIED, table_pb2.BOT_LEVEL_EASY
        assert await _bot_levels(alice, waiter.match) == [unspecified, easy, easy]
        level = await db.con.fetchval(
            "SELECT bot_level FROM tables WHERE id = $1::uuid", waiter.match.table_id
        )
        assert level == "easy"


async def test_an_unspecified_level_is_normal(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        (alice,) = await players(b.channel(), 1)
        waiter = await enqueue(alice, table_size=2, fill_with_bots_after_ms=100)
        assert waiter.ticket.bot_level == table_pb2.BOT_LEVEL_NORMAL
        await waiter.end()
        assert waiter.match is not None
        levels = await _bot_levels(alice, waiter.match)
        assert levels == [table_pb2.BOT_LEVEL_UNSPECIFIED, table_pb2.BOT_LEVEL_NORMAL]


async def test_a_private_table_plays_its_bots_at_the_hosts_level(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        alice, bob = await players(b.channel(), 2)
        hosting = await host(
            alice,
            table_size=3,
            fill_with_bots_after_ms=1000,
            bot_level=table_pb2.BOT_LEVEL_STRONG,
        )
        guest = await join(bob, hosting.ticket.invite_code)
        assert guest.ticket.bot_level == table_pb2.BOT_LEVEL_STRONG
        await asyncio.gather(hosting.end(), guest.end())
        assert hosting.match is not None
        levels = await _bot_levels(alice, hosting.match)
        unspecified, strong = table_pb2.BOT_LEVEL_UNSPECIFIED, table_pb2.BOT_LEVEL_STRONG
        assert levels == [unspecified, unspecified, strong]


async def test_an_unknown_level_is_refused(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b:
        (alice,) = await players(b.channel(), 1)
        queue = stub(alice).Enqueue(
            mm.EnqueueRequest(table_size=2, fill_with_bots_after_ms=100, bot_level=9),
            metadata=alice.auth,
        )
        code, info = await refusal(queue.read())
        assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BOT_LEVEL_UNKNOWN")
        private = stub(alice).CreatePrivateTable(
            mm.CreatePrivateTableRequest(table_size=2, bot_level=-1), metadata=alice.auth
        )
        code, info = await refusal(private.read())
        assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BOT_LEVEL_UNKNOWN")


def _asks_bots(n: int, level: str) -> Waiting:
    return Waiting(
        ticket_id=f"t{n}",
        player_id=f"p{n}",
        family="cafe|fifo|{}",
        table_size=4,
        created_ms=n,
        fill_bots_ms=1,
        bot_level=level,
    )


def test_a_training_table_seats_only_players_who_asked_for_the_same_level() -> None:
    """Three people cannot fill a table of four: each waits no longer for bots,
    and sits with those who asked for bots of the same level."""
    queue = [_asks_bots(0, "easy"), _asks_bots(1, "strong"), _asks_bots(2, "easy")]
    groups = form_tables(queue, now_ms=10)
    seated = [([t.ticket_id for t in g.tickets], g.bots, g.bot_level) for g in groups]
    assert seated == [(["t0", "t2"], 2, "easy"), (["t1"], 3, "strong")]
