"""A ticket's life through the public API: cancel, drop, expiry, one live ticket per
player, seated players."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import grpc
import pytest

from services.common.errors import error_info
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import Leave
from services.matchmaker import endings
from services.matchmaker.servicer import MatchmakerServicer
from services.matchmaker.streams import Streams
from tests.game.harness import Player

from .harness import (
    WAIT_S,
    Store,
    Waiter,
    backend,
    cancel,
    enqueue,
    get_ticket,
    on,
    players,
    refusal,
    store,
    stub,
    wait_on,
)


async def matched_table(people: list[Player], size: int) -> tuple[str, list[Waiter]]:
    waiters = [await enqueue(p, table_size=size) for p in people]
    await asyncio.gather(*(w.end() for w in waiters))
    matches = [w.match for w in waiters]
    assert all(m is not None for m in matches)
    table_ids = {m.table_id for m in matches if m is not None}
    assert len(table_ids) == 1
    return table_ids.pop(), waiters


# --- cancel, drop, expiry ---------------------------------------------------------


async def test_cancel_ends_the_stream_with_a_cancelled_ticket(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        waiter = await enqueue(alice, table_size=4)
        assert waiter.ticket.state == mm.TICKET_STATE_QUEUED
        assert waiter.ticket.table_size == 4 and waiter.ticket.ruleset == "cafe"
        cancelled = await cancel(alice, waiter.ticket_id)
        assert cancelled.state == mm.TICKET_STATE_CANCELLED
        assert cancelled.end_message
        await waiter.end()
        assert waiter.final.state == mm.TICKET_STATE_CANCELLED
        assert waiter.final.end_message == cancelled.end_message
        assert waiter.match is None
        assert await db.state(waiter.ticket_id) == "cancelled"
        # Cancelling again changes nothing and says so.
        again = await cancel(alice, waiter.ticket_id)
        assert again.state == mm.TICKET_STATE_CANCELLED
        # The player may queue again at once.
        second = await enqueue(alice, table_size=2)
        assert second.ticket_id != waiter.ticket_id


async def test_closing_the_stream_cancels_the_ticket(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        alice, bob = await players(b.channel(), 2)
        waiter = await enqueue(alice, table_size=2)
        waiter.drop()

        async def gone(s: Store) -> bool:
            return await s.state(waiter.ticket_id) == "cancelled"

        await db.eventually(gone, "the dropped ticket is cancelled")
        ticket = await get_ticket(alice, waiter.ticket_id)
        assert ticket.state == mm.TICKET_STATE_CANCELLED and ticket.end_message
        # Bob, coming next, is not seated with a player who left.
        bobs = await enqueue(bob, table_size=2)
        carol = (await players(b.channel(), 1, prefix="C"))[0]
        carols = await enqueue(carol, table_size=2)
        await asyncio.gather(bobs.end(), carols.end())
        assert bobs.match is not None and carols.match is not None
        seated = {r["player_id"] for r in await db.seats(bobs.match.table_id)}
        assert seated == {bob.player_id, carol.player_id}


async def test_a_stream_closed_as_its_ticket_is_stored_leaves_no_live_ticket(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The insert commits, then the call is cancelled before the stream follows
    the ticket: nobody would be there to play it, so it must not stay queued."""
    stored = MatchmakerServicer._store

    async def stored_then_cancelled(self: MatchmakerServicer, *args: Any, **kw: Any) -> Any:
        await stored(self, *args, **kw)
        raise asyncio.CancelledError

    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        monkeypatch.setattr(MatchmakerServicer, "_store", stored_then_cancelled)
        call = stub(alice).Enqueue(mm.EnqueueRequest(table_size=2), metadata=alice.auth)
        with contextlib.suppress(grpc.aio.AioRpcError, TimeoutError):
            async with asyncio.timeout(5):
                async for _ in call:
                    pass
        call.cancel()
        monkeypatch.undo()

        async def ended(s: Store) -> bool:
            live = await s.con.fetchval(
                "SELECT count(*) FROM tickets WHERE player_id = $1 AND state = 'queued'",
                alice.player_id,
            )
            return bool(live == 0)

        await db.eventually(ended, "the orphaned ticket is cancelled")
        states = await db.con.fetch(
            "SELECT state FROM tickets WHERE player_id = $1", alice.player_id
        )
        assert [r["state"] for r in states] == ["cancelled"], "it was stored, then cancelled"
        again = await enqueue(alice, table_size=2)
        assert again.ticket.state == mm.TICKET_STATE_QUEUED, "and the player may queue again"
        again.drop()


async def test_queueing_again_while_the_closed_streams_ticket_is_cancelled_gets_a_new_ticket(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The player closes the stream and queues again at once, while the server is
    still cancelling the first ticket (held, here, until the new Enqueue is seen
    waiting for it): the new Enqueue waits for that cancel instead of being refused
    as a second live ticket."""
    real_cancel = endings.cancel
    real_first = Streams.cancelled_first
    cancelling = asyncio.Event()
    second_waits = asyncio.Event()
    release = asyncio.Event()

    async def held_cancel(*args: Any, **kw: Any) -> Any:
        cancelling.set()
        await release.wait()
        return await real_cancel(*args, **kw)

    async def watched_first(self: Streams, player: str) -> None:
        # The new Enqueue waiting for the player's cancel. That wait is in the
        # replica, not in the database (no query shows it): it is seen here, as
        # the wait not being over once it had its turn to run.
        first_cancelled = asyncio.ensure_future(real_first(self, player))
        if cancelling.is_set() and not release.is_set():
            await asyncio.sleep(0)  # one turn of the loop, not a delay
            if not first_cancelled.done():
                second_waits.set()
        await first_cancelled

    async with backend(fresh_dsn) as b:
        (alice,) = await players(b.channel(), 1)
        monkeypatch.setattr(endings, "cancel", held_cancel)
        monkeypatch.setattr(Streams, "cancelled_first", watched_first)
        first = await enqueue(alice, table_size=2)
        again_call: asyncio.Task[Waiter] | None = None
        try:
            first.drop()
            await asyncio.wait_for(cancelling.wait(), WAIT_S)
            again_call = asyncio.ensure_future(enqueue(alice, table_size=2))
            seen = asyncio.ensure_future(second_waits.wait())
            try:
                await asyncio.wait(
                    {seen, again_call}, timeout=WAIT_S, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                seen.cancel()
            # An Enqueue that answered without waiting for the cancel shows why here.
            assert not again_call.done(), again_call.result()
            assert second_waits.is_set(), "the new Enqueue never came to wait for the cancel"
            release.set()
            again = await again_call
        finally:
            release.set()
            if again_call is not None and not again_call.done():
                again_call.cancel()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await again_call
        assert again.ticket.state == mm.TICKET_STATE_QUEUED
        assert again.ticket_id != first.ticket_id
        old = await get_ticket(alice, first.ticket_id)
        assert old.state == mm.TICKET_STATE_CANCELLED
        again.drop()


async def test_a_ticket_expires_with_a_final_message(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, ttl_s=1.0) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        waiter = await enqueue(alice, table_size=3)
        first = waiter.ticket
        assert first.expires_at.ToMilliseconds() - first.created_at.ToMilliseconds() == 1000
        await waiter.end()
        assert waiter.final.state == mm.TICKET_STATE_EXPIRED
        assert waiter.final.end_message
        assert waiter.match is None
        assert await db.state(waiter.ticket_id) == "expired"
        ticket = await get_ticket(alice, waiter.ticket_id)
        assert ticket.state == mm.TICKET_STATE_EXPIRED
        assert ticket.end_message == waiter.final.end_message


async def test_an_expired_ticket_is_never_matched(fresh_dsn: str) -> None:
    # No matching loop here: the ticket outlives its lifetime while nobody matches.
    async with backend(fresh_dsn, ttl_s=1.0, matching=False) as b, store(fresh_dsn) as db:
        alice, bob = await players(b.channel(), 2)
        first = await enqueue(alice, table_size=2)

        async def overdue(s: Store) -> bool:
            return bool(await s.con.fetchval("SELECT bool_and(expires_at < now()) FROM tickets"))

        await db.eventually(overdue, "the ticket is past its lifetime")
        second = await enqueue(bob, table_size=2)
        assert await b.matcher().match_once() == 0
        assert await db.state(first.ticket_id) == "queued"
        assert await db.state(second.ticket_id) == "queued"


# --- one live ticket per player ------------------------------------------------------


async def test_a_second_enqueue_names_the_live_ticket(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        waiter = await enqueue(alice, table_size=4)
        call = stub(alice).Enqueue(mm.EnqueueRequest(table_size=2), metadata=alice.auth)
        code, info = await refusal(call.read())
        assert code == grpc.StatusCode.ALREADY_EXISTS
        assert info.reason == "TICKET_EXISTS"
        assert info.metadata["ticket_id"] == waiter.ticket_id
        # The live ticket is untouched.
        assert await db.state(waiter.ticket_id) == "queued"
        assert await db.count("SELECT count(*) FROM tickets") == 1


async def test_replace_existing_cancels_the_old_ticket(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        alice, bob = await players(b.channel(), 2)
        old = await enqueue(alice, table_size=4)
        new = await enqueue(alice, table_size=2, replace_existing=True)
        assert new.ticket_id != old.ticket_id
        assert new.ticket.table_size == 2
        await old.end()
        assert old.final.state == mm.TICKET_STATE_CANCELLED and old.final.end_message
        assert await db.state(old.ticket_id) == "cancelled"
        bobs = await enqueue(bob, table_size=2)
        await asyncio.gather(new.end(), bobs.end())
        assert new.match is not None and bobs.match is not None
        assert new.match.table_id == bobs.match.table_id
        assert await db.state(old.ticket_id) == "cancelled"


async def test_concurrent_enqueues_of_one_player_leave_one_ticket(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)

        async def attempt() -> Waiter | tuple[grpc.StatusCode, str, str]:
            call = stub(alice).Enqueue(mm.EnqueueRequest(table_size=4), metadata=alice.auth)
            try:
                return await wait_on(call)
            except grpc.aio.AioRpcError as error:
                info = error_info(error)
                assert info is not None, error
                return error.code(), info.reason, info.metadata["ticket_id"]

        # Several rounds: the race between two inserts is what this is about.
        for round_ in range(1, 6):
            results = await asyncio.gather(*(attempt() for _ in range(16)))
            winners = [r for r in results if isinstance(r, Waiter)]
            losers = [r for r in results if not isinstance(r, Waiter)]
            assert len(winners) == 1, results
            assert set(losers) == {
                (grpc.StatusCode.ALREADY_EXISTS, "TICKET_EXISTS", winners[0].ticket_id)
            }
            assert await db.count("SELECT count(*) FROM tickets") == round_
            await cancel(alice, winners[0].ticket_id)
            await winners[0].end()


# --- seated players -------------------------------------------------------------------


async def test_a_seated_player_cannot_queue_until_the_table_ends(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        alice, bob = await players(b.channel(), 2)
        table_id, _ = await matched_table([alice, bob], 2)
        call = stub(alice).Enqueue(mm.EnqueueRequest(table_size=2), metadata=alice.auth)
        code, info = await refusal(call.read())
        assert code == grpc.StatusCode.FAILED_PRECONDITION
        assert info.reason == "ALREADY_SEATED"
        assert info.metadata["table_id"] == table_id
        # Where to find that table: the address a match names.
        assert info.metadata["game_target"] == b.game_target
        # Private tables too.
        call = stub(alice).CreatePrivateTable(
            mm.CreatePrivateTableRequest(table_size=2), metadata=alice.auth
        )
        code, info = await refusal(call.read())
        assert (code, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_SEATED")
        # Bob leaves: the game is over (one player left), and both may queue again.
        async with grpc.aio.insecure_channel(b.game_target) as game:
            reply = await on(bob, game).send(table_id, Leave())
            assert reply.view.phase == table_pb2.PHASE_GAME_OVER
        again = await enqueue(alice, table_size=2)
        bobs = await enqueue(bob, table_size=2)
        await asyncio.gather(again.end(), bobs.end())
        assert again.match is not None and again.match.table_id != table_id


async def test_leaving_an_unfinished_table_allows_queueing_again(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        people = await players(b.channel(), 3)
        table_id, _ = await matched_table(people, 3)
        leaver, stayer = people[0], people[1]
        async with grpc.aio.insecure_channel(b.game_target) as game:
            reply = await on(leaver, game).send(table_id, Leave())
            assert reply.view.phase != table_pb2.PHASE_GAME_OVER, "two players are still in"
        # The one who stayed is still seated at an unfinished table.
        call = stub(stayer).Enqueue(mm.EnqueueRequest(table_size=2), metadata=stayer.auth)
        code, info = await refusal(call.read())
        assert (code, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_SEATED")
        # The game service marks the seat left; the matchmaker reads that mark.
        left = [r for r in await db.seats(table_id) if r["player_id"] == leaver.player_id]
        assert left[0]["left_at"] is not None, "Leave did not set table_seats.left_at"
        waiter = await enqueue(leaver, table_size=2)
        assert waiter.ticket.state == mm.TICKET_STATE_QUEUED
