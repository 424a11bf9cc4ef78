"""Tickets asked for wrongly are refused; a ticket is looked up from any replica,
by its owner only, and tells its place in the queue."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import pytest

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from tests.game.harness import Player

from .harness import (
    WAIT_S,
    backend,
    enqueue,
    get_ticket,
    on,
    players,
    refusal,
    store,
    stub,
)

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


@pytest.mark.parametrize(
    ("field", "private"),
    [
        ("fill_with_bots_after_ms", False),
        ("accept_smaller_after_ms", False),
        ("fill_with_bots_after_ms", True),
    ],
)
async def test_waits_as_long_as_a_ticket_lives_are_refused(
    fresh_dsn: str, field: str, private: bool
) -> None:
    """A ticket expires first: such a wait could never end."""
    async with backend(fresh_dsn, ttl_s=30.0) as b, store(fresh_dsn) as db:
        alice, bob = await players(b.channel(), 2)

        def asking(player: Player, wait_ms: int) -> Any:
            if private:
                return stub(player).CreatePrivateTable(
                    mm.CreatePrivateTableRequest(table_size=3, **{field: wait_ms}),
                    metadata=player.auth,
                )
            return stub(player).Enqueue(
                mm.EnqueueRequest(table_size=3, **{field: wait_ms}), metadata=player.auth
            )

        for wait_ms in (30_000, 3_600_000, 2**32 - 1):
            code, info = await refusal(asking(alice, wait_ms).read())
            assert (code, info.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "WAIT_TOO_LONG")
            assert dict(info.metadata) == {"field": field, "ticket_lifetime_ms": "30000"}
        assert await db.count("SELECT count(*) FROM tickets") == 0
        # Shorter than the ticket's life: taken as asked.
        call = asking(bob, 29_999)
        first = await asyncio.wait_for(call.read(), WAIT_S)
        assert first.ticket.state == mm.TICKET_STATE_QUEUED
        column = "fill_bots_ms" if field.startswith("fill") else "accept_smaller_ms"
        assert await db.count(f"SELECT {column} FROM tickets") == 29_999
        call.cancel()


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
