"""Replacing calls of one player at once (`replace_existing`) settle as if made
one after the other: each is queued, each replaces the ticket queued before it,
whose stream ends with it cancelled, and the last one's ticket is left."""

from __future__ import annotations

import asyncio

import grpc

from services.common.errors import error_info
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from tests.game.harness import Player

from .harness import Store, Waiter, backend, cancel, enqueue, players, store, stub, wait_on

REPLACED = "Replaced by a new ticket."


async def replacing(player: Player) -> Waiter | tuple[grpc.StatusCode, str]:
    """One Enqueue with `replace_existing`: its stream, or how it was refused."""
    call = stub(player).Enqueue(
        mm.EnqueueRequest(table_size=4, replace_existing=True), metadata=player.auth
    )
    try:
        return await wait_on(call)
    except grpc.aio.AioRpcError as error:
        info = error_info(error)
        assert info is not None, error
        return error.code(), info.reason


async def settled(db: Store, player: Player, calls: int, earlier: str | None) -> Waiter:
    """``calls`` replacing Enqueues at once, with ``earlier`` the player's live
    ticket before them: every call is queued, one ticket is left live, and every
    other one (``earlier`` too) ended cancelled, replaced, its stream told so.
    The stream of the ticket left live."""
    results = await asyncio.gather(*(replacing(player) for _ in range(calls)))
    refused = [r for r in results if not isinstance(r, Waiter)]
    assert not refused, f"{len(refused)} of {calls} refused: {refused}"
    waiters = [r for r in results if isinstance(r, Waiter)]
    live = await db.con.fetch(
        "SELECT id FROM tickets WHERE player_id = $1 AND state IN ('queued', 'matching')",
        player.player_id,
    )
    assert len(live) == 1, live
    (kept,) = [w for w in waiters if w.ticket_id == str(live[0]["id"])]
    for replaced in (w for w in waiters if w is not kept):
        await replaced.end()
        assert replaced.final.state == mm.TICKET_STATE_CANCELLED
        assert replaced.final.end_message == REPLACED
    if earlier is not None:
        ended = await db.ticket(earlier)
        assert (ended["state"], ended["end_message"]) == ("cancelled", REPLACED)
    return kept


async def test_two_replacing_enqueues_at_once_settle_to_one_ticket(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        # Round 1 with no live ticket, every later one replacing the previous
        # round's: the race is between the two calls' inserts, or their locks.
        live: Waiter | None = None
        for _ in range(10):
            live = await settled(db, alice, 2, live.ticket_id if live else None)
        assert await db.count("SELECT count(*) FROM tickets") == 20


async def test_many_replacing_enqueues_at_once_settle_to_one_ticket(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        first = await enqueue(alice, table_size=2)
        await settled(db, alice, 12, first.ticket_id)
        await first.end()
        assert first.final.end_message == REPLACED
        assert await db.count("SELECT count(*) FROM tickets WHERE state = 'cancelled'") == 12


async def test_a_replacing_enqueue_replaces_a_plain_one_made_at_once(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        outcomes = set()
        for _ in range(10):
            plain = stub(alice).Enqueue(mm.EnqueueRequest(table_size=2), metadata=alice.auth)
            plain_result, kept = await asyncio.gather(
                wait_on(plain), replacing(alice), return_exceptions=True
            )
            # The replacing call is queued whatever the plain one did...
            assert isinstance(kept, Waiter), kept
            assert await db.state(kept.ticket_id) == "queued"
            if isinstance(plain_result, Waiter):
                # ...which was queued first, then replaced,
                await plain_result.end()
                assert plain_result.final.end_message == REPLACED
                outcomes.add("replaced")
            else:
                # ...or came second, and was told of the replacing call's ticket.
                assert isinstance(plain_result, grpc.aio.AioRpcError), plain_result
                info = error_info(plain_result)
                assert info is not None and info.reason == "TICKET_EXISTS", plain_result
                assert info.metadata["ticket_id"] == kept.ticket_id
                outcomes.add("refused")
            await cancel(alice, kept.ticket_id)
            await kept.end()
        print(f"plain Enqueue beside a replacing one: {sorted(outcomes)}")
