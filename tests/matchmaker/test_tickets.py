"""A ticket's life through the public API: cancel, drop, expiry, duplicates, refusals."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

import grpc
import pytest

from services.common.errors import error_info
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.game.rules.actions import Leave
from services.game.rules.bots import GreedyBot
from services.matchmaker import endings
from services.matchmaker.servicer import MatchmakerServicer
from tests.game.harness import Player, greedy_turn

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
    still cancelling the first ticket (slowly, here): the new Enqueue waits for that
    cancel instead of being refused as a second live ticket."""
    real_cancel = endings.cancel
    cancelling = asyncio.Event()

    async def slow_cancel(*args: Any, **kw: Any) -> Any:
        cancelling.set()
        await asyncio.sleep(0.5)
        return await real_cancel(*args, **kw)

    async with backend(fresh_dsn) as b:
        (alice,) = await players(b.channel(), 1)
        monkeypatch.setattr(endings, "cancel", slow_cancel)
        first = await enqueue(alice, table_size=2)
        first.drop()
        await asyncio.wait_for(cancelling.wait(), WAIT_S)
        again = await enqueue(alice, table_size=2)
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


async def test_concurrent_replacing_enqueues_leave_one_live_ticket(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)

        async def attempt() -> Waiter | tuple[grpc.StatusCode, str]:
            call = stub(alice).Enqueue(
                mm.EnqueueRequest(table_size=4, replace_existing=True), metadata=alice.auth
            )
            try:
                return await wait_on(call)
            except grpc.aio.AioRpcError as error:
                info = error_info(error)
                assert info is not None, error
                return error.code(), info.reason

        for _ in range(4):
            results = await asyncio.gather(*(attempt() for _ in range(12)))
            refusals = {r for r in results if not isinstance(r, Waiter)}
            assert refusals <= {(grpc.StatusCode.ALREADY_EXISTS, "TICKET_EXISTS")}, results
            waiters = [r for r in results if isinstance(r, Waiter)]
            assert waiters
            live = await db.con.fetch(
                "SELECT id FROM tickets WHERE state IN ('queued', 'matching')"
            )
            assert len(live) == 1
            # Every other ticket that was queued was replaced, and told so.
            for w in waiters:
                if w.ticket_id != str(live[0]["id"]):
                    await w.end()
                    assert w.final.state == mm.TICKET_STATE_CANCELLED
        assert (
            await db.count(
                "SELECT count(*) FROM tickets WHERE state NOT IN ('queued', 'cancelled')"
            )
            == 0
        )


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


# --- refusals ----------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 5, 1000])
async def test_bad_table_sizes_are_refused(fresh_dsn: str, size: int) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        calls: list[Any] = [
            stub(alice).Enqueue(mm.EnqueueRequest(table_size=size), metadata=alice.auth),
            stub(alice).CreatePrivateTable(
                mm.CreatePrivateTableRequest(table_size=size), metadata=alice.auth
            ),
        ]
        for call in calls:
            code, info = await refusal(call.read())
            assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "TABLE_SIZE_INVALID")
        assert await db.count("SELECT count(*) FROM tickets") == 0


async def test_unknown_rule_sets_and_bad_options_are_refused(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        (alice,) = await players(b.channel(), 1)
        for call in (
            stub(alice).Enqueue(
                mm.EnqueueRequest(table_size=2, ruleset="no-such-rules"), metadata=alice.auth
            ),
            stub(alice).CreatePrivateTable(
                mm.CreatePrivateTableRequest(table_size=2, ruleset="no-such-rules"),
                metadata=alice.auth,
            ),
        ):
            code, info = await refusal(call.read())
            assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "RULESET_UNKNOWN")
        bad = table_pb2.TableOptions(turn_timer_ms=5)
        call = stub(alice).Enqueue(
            mm.EnqueueRequest(table_size=2, options=bad), metadata=alice.auth
        )
        code, info = await refusal(call.read())
        assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "OPTIONS_INVALID")
        assert await db.count("SELECT count(*) FROM tickets") == 0


async def test_calls_need_a_player_token(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b:
        call = stub(Player(b.channel(), "", "", "")).Enqueue(mm.EnqueueRequest(table_size=2))
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await call.read()
        assert failure.value.code() == grpc.StatusCode.UNAUTHENTICATED


# --- looking a ticket up -------------------------------------------------------------


async def test_get_ticket_after_a_reconnect_to_another_replica(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, replicas=2) as b:
        alice, bob = await players(b.channel(0), 2)
        waiter = await enqueue(alice, table_size=2)
        # Asked through the other replica while waiting...
        moved = on(alice, b.channel(1))
        queued = await get_ticket(moved, waiter.ticket_id)
        assert queued.state == mm.TICKET_STATE_QUEUED
        assert queued.ticket_id == waiter.ticket_id and queued.table_size == 2
        assert not queued.HasField("match")
        # ...and after the match, which the stream reported.
        bobs = await enqueue(on(bob, b.channel(1)), table_size=2)
        await asyncio.gather(waiter.end(), bobs.end())
        assert waiter.match is not None
        matched = await get_ticket(moved, waiter.ticket_id)
        assert matched.state == mm.TICKET_STATE_MATCHED
        assert matched.match == waiter.match
        assert matched.match.game_target == b.game_target
        # The table is there, with alice at the seat she was told.
        async with grpc.aio.insecure_channel(matched.match.game_target) as game:
            view = await on(alice, game).view(matched.match.table_id)
            assert view.my_seat == matched.match.seat


async def test_another_players_ticket_is_not_found(fresh_dsn: str) -> None:
    async with backend(fresh_dsn) as b, store(fresh_dsn) as db:
        alice, mallory = await players(b.channel(), 2)
        waiter = await enqueue(alice, table_size=4)
        for request_id in (waiter.ticket_id, str(uuid.uuid4())):
            code, info = await refusal(
                stub(mallory).GetTicket(
                    mm.GetTicketRequest(ticket_id=request_id), metadata=mallory.auth
                )
            )
            assert (code, info.reason) == (grpc.StatusCode.NOT_FOUND, "TICKET_NOT_FOUND")
            code, info = await refusal(
                stub(mallory).Cancel(mm.CancelRequest(ticket_id=request_id), metadata=mallory.auth)
            )
            assert (code, info.reason) == (grpc.StatusCode.NOT_FOUND, "TICKET_NOT_FOUND")
        assert await db.state(waiter.ticket_id) == "queued"
        code, info = await refusal(
            stub(alice).GetTicket(mm.GetTicketRequest(ticket_id="nope"), metadata=alice.auth)
        )
        assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "TICKET_ID_INVALID")


async def test_progress_tells_the_players_waiting_in_the_queue_and_the_place(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b:
        alice, bob, carol = await players(b.channel(), 3)
        first = await enqueue(alice, table_size=4)
        second = await enqueue(bob, table_size=4)
        # Same rule set and options, another size: a queue of its own.
        await enqueue(carol, table_size=3)
        # A report may come from a reading made before the ticket was stored
        # (no place yet): the next one, a second later, has it.
        async with asyncio.timeout(WAIT_S):
            while not (progress := await second.until("progress")).position:
                assert progress.players_waiting <= 2
        assert (progress.players_waiting, progress.position) == (2, 2)
        async with asyncio.timeout(WAIT_S):
            while not (progress := await first.until("progress")).position:
                pass
        assert (progress.players_waiting, progress.position) == (2, 1)
        assert progress.seats_taken == 0


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
