"""Tables the game service refuses for good, or makes without the matchmaker
hearing of it: a refused table is not formed again and its players are told
why; a table that exists after all seats its players, whatever was answered."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from structlog.testing import capture_logs

from services.common.pb.rummy.internal.v1 import tables_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker import matcher as matcher_module

from .harness import Store, Waiter, backend, enqueue, players, store
from .test_recovery import dead_port


@pytest.fixture(autouse=True)
def quick_recovery(monkeypatch: pytest.MonkeyPatch) -> None:
    """A match left `creating` is taken over by the next recovery pass."""
    monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.0)


async def check_seated(db: Store, waiters: list[Waiter], table_id: uuid.UUID) -> None:
    """Every ticket matched at that table, where its player sits."""
    for w in waiters:
        assert await db.state(w.ticket_id) == "matched"
    await asyncio.gather(*(w.end() for w in waiters))
    for w in waiters:
        assert w.match is not None and w.match.table_id == str(table_id)
        seats = await db.seats(w.match.table_id)
        row = await db.ticket(w.ticket_id)
        assert seats[w.match.seat]["player_id"] == row["player_id"]
    assert await db.count("SELECT count(*) FROM matches WHERE state <> 'created'") == 0


async def test_a_table_the_game_service_refuses_is_not_formed_again(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        alice, bob, carol = await players(b.channel(), 3)
        refused = [await enqueue(p, table_size=2) for p in (alice, bob)]
        waiting = await enqueue(carol, table_size=2)
        # A name the game service does not take: it refuses the table for good
        # (INVALID_ARGUMENT), however often it is asked.
        await db.con.execute(
            "UPDATE tickets SET display_name = 'Alice\n' WHERE id = $1",
            uuid.UUID(refused[0].ticket_id),
        )
        with capture_logs() as logs:
            for _ in range(3):
                await b.matcher().match_once()
        assert await db.count("SELECT count(*) FROM matches") == 1
        assert await db.count("SELECT count(*) FROM matches WHERE state = 'failed'") == 1
        asked = [e for e in logs if e["event"] == "create_table_failed"]
        assert [e["code"] for e in asked] == ["INVALID_ARGUMENT"]
        ended = [e for e in logs if e["event"] == "matches_refused"]
        assert len(ended) == 1 and ended[0]["log_level"] == "error"
        await asyncio.gather(*(w.end() for w in refused))
        for w in refused:
            assert w.final.state == mm.TICKET_STATE_EXPIRED
            assert w.final.end_message == matcher_module.REFUSED
            assert w.match is None
        # The partner is free: queueing again, Bob sits down with Carol.
        assert await db.state(waiting.ticket_id) == "queued"
        again = await enqueue(bob, table_size=2)
        assert await b.matcher().match_once() == 2
        await asyncio.gather(again.end(), waiting.end())
        assert again.match is not None and waiting.match is not None
        assert again.match.table_id == waiting.match.table_id


async def test_a_table_the_game_service_says_exists_already_seats_its_tickets(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        alice, bob = await players(b.channel(), 2)
        waiters = [await enqueue(p, table_size=2) for p in (alice, bob)]
        (plan,) = await b.matcher().claim()
        # An earlier call made this table, asking for it in other words (a name
        # as it read then): asked again, the game service answers ALREADY_EXISTS.
        earlier = tables_pb2.CreateTableRequest()
        earlier.CopyFrom(plan.request)
        earlier.players[0].display_name = "Alice before"
        assert await b.matcher().tables.create_all([earlier]) == [True]
        with capture_logs() as logs:
            assert await b.matcher().recover() == 1
        asked = [e for e in logs if e["event"] == "create_table_failed"]
        assert [e["code"] for e in asked] == ["ALREADY_EXISTS"]
        await check_seated(db, waiters, plan.table_id)


async def test_a_match_given_up_whose_table_was_made_seats_its_tickets(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        with dead_port() as (_, port):
            cut_off = await b.add_replica(
                game_target=f"127.0.0.1:{port}", matching=False, give_up_s=0.0
            )
            alice, bob = await players(b.channel(cut_off), 2)
            waiters = [await enqueue(p, table_size=2) for p in (alice, bob)]
            (plan,) = await b.matcher(cut_off).claim()
            # CreateTables made the table but its answer was lost; the game
            # service has been out of this replica's reach since.
            assert await b.matcher().tables.create_all([plan.request]) == [True]
            with capture_logs() as logs:
                assert await b.matcher(cut_off).recover() == 1
            asked = [
                e for e in logs if e["event"] in ("create_table_failed", "create_tables_failed")
            ]
            assert asked and {e["code"] for e in asked} == {"UNAVAILABLE"}
            assert not [e for e in logs if e["event"] == "matches_given_up"]
            await check_seated(db, waiters, plan.table_id)
