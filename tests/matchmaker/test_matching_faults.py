"""The matching loop outlives what goes wrong: an unexpected error is logged and
matching goes on, an answer from the game service that cannot be read is asked
again table by table, and a match that cannot be read is given up without
holding up any other."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from structlog.testing import capture_logs

from services.common.pb.rummy.internal.v1 import tables_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker import matcher as matcher_module
from services.matchmaker.matcher import Matcher
from services.matchmaker.table_maker import TableMaker

from .game_front import CREATE_TABLE, CREATE_TABLES, Front, game_front, unchanged
from .harness import backend, enqueue, players, store
from .test_older_game_service import check_completed_anywhere
from .test_recovery import queue_tables


async def test_the_matching_loop_survives_an_unexpected_error(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    claim = Matcher.claim
    faults = 0

    async def failing_claim(self: Matcher) -> Any:
        nonlocal faults
        if faults < 3:
            faults += 1
            raise RuntimeError("a fault no one planned for")
        return await claim(self)

    monkeypatch.setattr(Matcher, "claim", failing_claim)
    async with backend(fresh_dsn, replicas=0) as b:
        with capture_logs() as logs:
            replica = await b.add_replica(matching=True)
            alice, bob = await players(b.channel(replica), 2)
            waiters = [await enqueue(p, table_size=2) for p in (alice, bob)]
            await asyncio.gather(*(w.end() for w in waiters))
    assert all(w.match is not None for w in waiters)
    assert faults == 3
    crashed = [e for e in logs if e["event"] == "matching_crashed"]
    assert len(crashed) == 3
    assert all(e["log_level"] == "error" and e["exc_info"] for e in crashed)


def without_the_last_table(reply: bytes) -> bytes:
    answer = tables_pb2.CreateTablesResponse.FromString(reply)
    del answer.results[-1]
    return answer.SerializeToString()


def answering_short(target: str) -> Front:
    """In front of the game service: CreateTable and CreateTables are passed on, but
    the last table is left out of every CreateTables answer."""
    return game_front(target, {CREATE_TABLE: unchanged, CREATE_TABLES: without_the_last_table})


async def test_a_create_tables_answer_missing_a_table_is_asked_again_table_by_table(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, replicas=0) as b, store(fresh_dsn) as db:
        async with answering_short(b.game_target) as (short, asked):
            with capture_logs() as logs:
                replica = await b.add_replica(game_target=short, matching=True)
                _, waiters = await queue_tables(b, replica)
                await check_completed_anywhere(db, waiters)
        assert CREATE_TABLES in asked and CREATE_TABLE in asked
        unreadable = [e for e in logs if e["event"] == "create_tables_answer_unreadable"]
        assert unreadable and all(e["log_level"] == "error" for e in unreadable)
        # Batches are still tried first: the game service has CreateTables.
        assert b.matcher(replica).tables._batched


async def test_a_match_that_cannot_be_read_is_given_up_and_holds_up_no_other(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.0)
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        people = await players(b.channel(), 4)
        # Two matches left half-made, as by a replica that died; the older one's
        # record is damaged.
        damaged = [await enqueue(p, table_size=2) for p in people[:2]]
        (plan,) = await b.matcher().claim()
        await db.con.execute(
            "UPDATE matches SET request = $2 WHERE table_id = $1", plan.table_id, b"\xff"
        )
        sound = [await enqueue(p, table_size=2) for p in people[2:]]
        assert len(await b.matcher().claim()) == 1
        with capture_logs() as logs:
            assert await b.matcher().recover() == 2
        await asyncio.gather(*(w.end() for w in damaged + sound))
        for w in damaged:
            assert w.final.state == mm.TICKET_STATE_EXPIRED
            assert w.final.end_message == matcher_module.NOT_STARTED
        assert all(w.match is not None for w in sound)
        unreadable = [e for e in logs if e["event"] == "match_unreadable"]
        assert [e["table_id"] for e in unreadable] == [str(plan.table_id)]
        assert unreadable[0]["log_level"] == "error"
        states = await db.con.fetch("SELECT table_id, state FROM matches")
        assert {r["table_id"]: r["state"] for r in states}[plan.table_id] == "failed"
        assert sorted(r["state"] for r in states) == ["created", "failed"]
        # Nobody is stuck: a player of the damaged match can queue again.
        again = await enqueue(people[0], table_size=2)
        assert again.ticket.state == mm.TICKET_STATE_QUEUED


async def test_a_table_that_keeps_failing_is_given_up_and_holds_up_no_other(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        people = await players(b.channel(), 4)
        cursed = people[0].player_id
        create_all = TableMaker.create_all

        async def failing_for_one(self: TableMaker, requests: list[Any], **how: Any) -> Any:
            if any(p.player_id == cursed for r in requests for p in r.players):
                raise RuntimeError("a fault no one planned for")
            return await create_all(self, requests, **how)

        monkeypatch.setattr(TableMaker, "create_all", failing_for_one)
        waiters = [await enqueue(p, table_size=2) for p in people]
        # One claim, two tables: the other one is made all the same.
        with capture_logs() as logs:
            assert await b.matcher().match_once() == 4
        await asyncio.gather(*(w.end() for w in waiters[2:]))
        assert all(w.match is not None for w in waiters[2:])
        crashed = [e for e in logs if e["event"] == "create_tables_crashed"]
        assert crashed and all(e["log_level"] == "error" for e in crashed)
        assert await db.state(waiters[0].ticket_id) == "matching"
        # It keeps failing: given up in the end, as a table never created in time is.
        monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.0)
        b.matcher().give_up_s = 0.0
        assert await b.matcher().recover() == 1
        await asyncio.gather(*(w.end() for w in waiters[:2]))
        for w in waiters[:2]:
            assert w.final.state == mm.TICKET_STATE_EXPIRED
            assert w.final.end_message == matcher_module.NOT_STARTED
