"""Bots fill the seats nobody took for players who asked for them, and play;
patient players accept a smaller table."""

from __future__ import annotations

import asyncio

import grpc

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.game.rules.bots import GreedyBot
from tests.game.harness import Player, greedy_turn

from .harness import (
    WAIT_S,
    backend,
    enqueue,
    on,
    players,
    store,
)

# --- bots ------------------------------------------------------------------------------


async def test_bots_fill_the_empty_seats_after_the_wait(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        alice, bob, carol = await players(b.channel(), 3)
        waiter = await enqueue(alice, table_size=4, fill_with_bots_after_ms=60_000)
        # Bob would take bots too, later; Carol never asked for them.
        carols = await enqueue(carol, table_size=4)
        bobs = await enqueue(bob, table_size=4, fill_with_bots_after_ms=120_000)
        assert await b.matcher().match_once() == 0, "alice's wait is not over"
        await db.backdate(waiter.ticket_id, 60)
        assert await b.matcher().match_once() == 2
        assert await db.state(carols.ticket_id) == "queued"
        await asyncio.gather(waiter.end(), bobs.end())
        assert waiter.match is not None and bobs.match is not None
        assert waiter.match.table_id == bobs.match.table_id
        assert (waiter.match.seat, bobs.match.seat) == (0, 1)
        assert waiter.match.table_size == 4
        rows = await db.seats(waiter.match.table_id)
        assert [r["is_bot"] for r in rows] == [False, False, True, True]
        async with grpc.aio.insecure_channel(waiter.match.game_target) as game:
            reply = await on(alice, game).call(
                "GetTable", game_pb2.GetTableRequest(table_id=waiter.match.table_id)
            )
        view = reply.view
        assert [s.is_bot for s in view.seats] == [False, False, True, True]
        assert [s.player_id for s in view.seats][:2] == [alice.player_id, bob.player_id]


async def test_a_table_filled_with_bots_is_played_by_them(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        (alice,) = await players(b.channel(), 1)
        bot_turns = 0
        # A random deal may let Alice go out before the bot ever plays: another game.
        for _ in range(3):
            waiter = await enqueue(alice, table_size=2, fill_with_bots_after_ms=200)
            await waiter.end()
            assert waiter.match is not None and waiter.match.seat == 0
            bot_turns = await _bot_turns_seen(alice, waiter.match)
            if bot_turns:
                break
        assert bot_turns >= 1


async def _bot_turns_seen(alice: Player, match: mm.Match) -> int:
    """Alice plays her turns; the server plays the bot's: the turn comes back."""
    table_id = match.table_id
    async with grpc.aio.insecure_channel(match.game_target) as game:
        me = on(alice, game)
        view = await me.view(table_id)
        assert [s.is_bot for s in view.seats] == [False, True]
        bot = GreedyBot()
        bot_turns = 0
        async with asyncio.timeout(WAIT_S):
            while bot_turns < 3 and view.phase != table_pb2.PHASE_GAME_OVER:
                if view.current_seat == 0:
                    view = await greedy_turn(me, table_id, view, bot)
                    continue
                while view.current_seat == 1 and view.phase != table_pb2.PHASE_GAME_OVER:
                    await asyncio.sleep(0.05)
                    view = await me.view(table_id)
                bot_turns += 1
        return bot_turns


async def test_patient_players_accept_a_smaller_table(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        alice, bob = await players(b.channel(), 2)
        waiters = [
            await enqueue(p, table_size=4, accept_smaller_after_ms=200) for p in (alice, bob)
        ]
        await asyncio.gather(*(w.end() for w in waiters))
        matches = [w.match for w in waiters]
        assert all(m is not None and m.table_size == 2 for m in matches)
        # The ticket still says what was asked; the match says what was found.
        assert all(w.final.table_size == 4 for w in waiters)
        assert waiters[0].match is not None
        assert len(await db.seats(waiters[0].match.table_id)) == 2
