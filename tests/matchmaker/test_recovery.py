"""A replica that dies, stalls or cannot reach the game service half-way through a
match leaves no half-made match: any replica completes it, exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator
from typing import Any

import grpc
import pytest

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker import matcher as matcher_module
from services.matchmaker import table_maker
from services.matchmaker.matcher import Plan
from tests.game.harness import Player, start_server

from .harness import (
    WAIT_S,
    Backend,
    Store,
    Waiter,
    backend,
    enqueue,
    get_ticket,
    players,
    refusal,
    store,
    stub,
)

SIZES = (2, 2, 3, 3, 4, 4)
"""Six tables: 18 players."""


@pytest.fixture(autouse=True)
def quick_recovery(monkeypatch: pytest.MonkeyPatch) -> None:
    """Matches left `creating` are taken over after half a second, not three."""
    monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.5)


@contextlib.contextmanager
def dead_port() -> Iterator[tuple[socket.socket, int]]:
    """A local port nothing answers on (bound, never listening: connections are refused)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock, sock.getsockname()[1]
    finally:
        sock.close()


async def queue_tables(b: Backend, replica: int) -> tuple[list[Player], list[Waiter]]:
    """Players for `SIZES` tables, each waiting on a stream to ``replica``."""
    people = await players(b.channel(replica), sum(SIZES))
    waiters = []
    i = 0
    for size in SIZES:
        for _ in range(size):
            waiters.append(await enqueue(people[i], table_size=size))
            i += 1
    return people, waiters


@contextlib.asynccontextmanager
async def running(work: Coroutine[Any, Any, int]) -> AsyncIterator[asyncio.Task[int]]:
    """``work`` as a task, cancelled on the way out if still running: a failed
    check must not leave a replica's connection held and the teardown hanging."""
    task = asyncio.create_task(work)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def half_made(db: Store) -> dict[str, uuid.UUID]:
    """Ticket -> table of the match it waits on; checks nothing got further."""
    states = await db.con.fetch("SELECT state, count(*) AS n FROM matches GROUP BY state")
    assert {r["state"]: r["n"] for r in states} == {"creating": len(SIZES)}
    rows = await db.con.fetch("SELECT id, state, table_id FROM tickets")
    assert {r["state"] for r in rows} == {"matching"}
    assert await db.count("SELECT count(*) FROM tables") == 0
    return {str(r["id"]): r["table_id"] for r in rows}


async def check_completed(db: Store, waiters: list[Waiter], planned: dict[str, uuid.UUID]) -> None:
    """Every match created once, at the table id it was given, every ticket seated once."""
    await asyncio.gather(*(w.end() for w in waiters))
    assert {r["state"] for r in await db.con.fetch("SELECT state FROM matches")} == {"created"}
    tables = await db.con.fetch("SELECT id FROM tables")
    assert len(tables) == len(SIZES)
    assert {r["id"] for r in tables} == set(planned.values())
    seats = await db.con.fetch("SELECT table_id, seat, player_id FROM table_seats")
    assert len(seats) == sum(SIZES)
    assert len({s["player_id"] for s in seats}) == len(seats), "a player sits twice"
    seat_of = {(s["table_id"], s["seat"]): s["player_id"] for s in seats}
    for w in waiters:
        row = await db.ticket(w.ticket_id)
        assert row["state"] == "matched"
        assert row["table_id"] == planned[w.ticket_id], "the match moved to another table"
        assert w.match is not None and w.final.state == mm.TICKET_STATE_MATCHED
        assert (w.match.table_id, w.match.seat) == (str(row["table_id"]), row["seat"])
        assert seat_of[(row["table_id"], row["seat"])] == row["player_id"]
    # Created once: a table created twice would have been dealt (and versioned) twice.
    versions = await db.con.fetch("SELECT version FROM tables")
    assert {r["version"] for r in versions} == {1}


async def test_a_replica_killed_after_its_commit_is_completed_by_another(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Replica 0 serves the players' streams and never matches.
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        people, waiters = await queue_tables(b, 0)
        victim = await b.add_replica(matching=False)
        committed = asyncio.Event()

        async def die(con: Any, plans: list[Plan]) -> None:
            # The replica dies right after its first transaction, before CreateTables.
            committed.set()
            await asyncio.Event().wait()

        monkeypatch.setattr(b.matcher(victim), "_finish", die)
        async with running(b.matcher(victim).match_once()):
            await asyncio.wait_for(committed.wait(), WAIT_S)
        await b.stop_replica(victim)

        planned = await half_made(db)
        # A player who reconnects meanwhile is told the ticket still waits.
        assert (await get_ticket(people[0], waiters[0].ticket_id)).state == (mm.TICKET_STATE_QUEUED)
        await b.add_replica(matching=True)
        await check_completed(db, waiters, planned)


async def test_a_replica_killed_during_create_table_keeps_its_matches_until_it_is_gone(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        _, waiters = await queue_tables(b, 0)
        victim = await b.add_replica(matching=False)
        calling = asyncio.Event()

        async def hang(requests: Any, **_: Any) -> list[bool | None]:
            # CreateTables was sent and never answers.
            calling.set()
            await asyncio.Event().wait()
            return []

        monkeypatch.setattr(b.matcher(victim).tables, "create_all", hang)

        async def overdue(s: Store) -> bool:
            return bool(
                await s.con.fetchval(
                    "SELECT bool_and(created_at < now() - make_interval(secs => $1)) FROM matches",
                    matcher_module.RECOVER_AFTER_S,
                )
            )

        rescuer = await b.add_replica(matching=False)
        async with running(b.matcher(victim).match_once()):
            await asyncio.wait_for(calling.wait(), WAIT_S)
            planned = await half_made(db)
            await db.eventually(overdue, "the matches are old enough to be taken over")
            # While the victim lives, its matches are its own.
            assert await b.matcher(rescuer).recover() == 0
        # It died (its transaction went with it): the matches are taken over.
        await b.stop_replica(victim)
        assert await b.matcher(rescuer).recover() == len(SIZES)
        await check_completed(db, waiters, planned)


async def test_a_stalled_replica_that_wakes_up_after_the_takeover_changes_nothing(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        _, waiters = await queue_tables(b, 0)
        zombie = await b.add_replica(matching=False)
        original = b.matcher(zombie)._finish
        committed, wake = asyncio.Event(), asyncio.Event()

        async def stall(con: Any, plans: list[Plan]) -> None:
            committed.set()
            await wake.wait()
            await original(con, plans)

        monkeypatch.setattr(b.matcher(zombie), "_finish", stall)
        async with running(b.matcher(zombie).match_once()) as task:
            await asyncio.wait_for(committed.wait(), WAIT_S)
            planned = await half_made(db)
            # Another replica takes the matches over and completes them...
            await b.add_replica(matching=True)
            await check_completed(db, waiters, planned)
            events = await db.count("SELECT count(*) FROM table_events")
            # ...then the stalled one carries on: it finds nothing left to do.
            wake.set()
            assert await asyncio.wait_for(task, WAIT_S) == sum(SIZES)
        assert await db.count("SELECT count(*) FROM table_events") == events
        await check_completed(db, [], planned)


async def test_an_unreachable_game_service_delays_matches_until_it_is_back(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn, replicas=0) as b, store(fresh_dsn) as db:
        with dead_port() as (sock, port):
            broken = await b.add_replica(game_target=f"127.0.0.1:{port}", matching=True)
            _, waiters = await queue_tables(b, broken)

            async def all_creating(s: Store) -> bool:
                return await s.count("SELECT count(*) FROM matches") == len(SIZES)

            await db.eventually(all_creating, "every table is planned")
            planned = await half_made(db)
            # The game service comes back on the same address: the replica's own
            # recovery (after its CreateTables failed) completes every match.
            sock.close()
            second_game = await start_server(fresh_dsn, address=f"127.0.0.1:{port}")
            try:
                await check_completed(db, waiters, planned)
            finally:
                await second_game.stop(0)


async def test_another_replica_completes_what_one_without_the_game_service_began(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The calls of the broken replica's claim wait this long for the game service
    # (then its matches are free for another replica), rather than 10 s.
    monkeypatch.setattr(table_maker, "CALL_TIMEOUT_S", 2.0)
    async with backend(fresh_dsn, replicas=0) as b, store(fresh_dsn) as db:
        with dead_port() as (_, port):
            broken = await b.add_replica(game_target=f"127.0.0.1:{port}", matching=True)
            _, waiters = await queue_tables(b, broken)

            async def all_creating(s: Store) -> bool:
                return await s.count("SELECT count(*) FROM matches") == len(SIZES)

            await db.eventually(all_creating, "every table is planned")
            planned = await half_made(db)
            # The broken replica keeps failing; a healthy one takes over.
            await b.add_replica(matching=True)
            await check_completed(db, waiters, planned)


async def test_tickets_of_a_table_never_created_end_saying_so(fresh_dsn: str) -> None:
    async with backend(fresh_dsn, replicas=0) as b, store(fresh_dsn) as db:
        with dead_port() as (_, port):
            broken = await b.add_replica(
                game_target=f"127.0.0.1:{port}", matching=True, give_up_s=1.0
            )
            alice, bob, carol, dan = await players(b.channel(broken), 4)
            waiters = [await enqueue(p, table_size=2) for p in (alice, bob, carol, dan)]

            async def all_matching(s: Store) -> bool:
                return await s.count("SELECT count(*) FROM tickets WHERE state = 'matching'") == 4

            await db.eventually(all_matching, "both tables are planned")
            # Leaving now is too late (the table may exist already): said so, and kept.
            status, info = await refusal(
                stub(alice).Cancel(
                    mm.CancelRequest(ticket_id=waiters[0].ticket_id), metadata=alice.auth
                )
            )
            assert (status, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TICKET_MATCHING")
            waiters[2].drop()
            await asyncio.gather(*(w.end() for i, w in enumerate(waiters) if i != 2))
            assert [w.final.state for w in waiters[:2]] == [
                mm.TICKET_STATE_CANCELLED,
                mm.TICKET_STATE_EXPIRED,
            ]
            assert waiters[1].final.end_message == matcher_module.NOT_STARTED
            assert waiters[3].final.state == mm.TICKET_STATE_EXPIRED

            async def all_ended(s: Store) -> bool:
                return await s.count("SELECT count(*) FROM tickets WHERE ended_at IS NULL") == 0

            await db.eventually(all_ended, "every ticket ended")
            assert await db.state(waiters[2].ticket_id) == "cancelled"
            assert await db.count("SELECT count(*) FROM matches WHERE state = 'failed'") == 2
            # Nobody is stuck: each can queue again.
            again = await enqueue(bob, table_size=2)
            assert again.ticket.state == mm.TICKET_STATE_QUEUED


async def test_a_player_who_left_during_a_refused_match_is_not_queued_again(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.0)
    async with backend(fresh_dsn, matching=False) as b, store(fresh_dsn) as db:
        alice, bob = await players(b.channel(), 2)
        leaving, staying = await enqueue(alice, table_size=2), await enqueue(bob, table_size=2)
        # A table the game service refuses for good: its rule set is unknown there.
        await db.con.execute("UPDATE tickets SET ruleset = 'unknown'")
        assert len(await b.matcher().claim()) == 1
        status, info = await refusal(
            stub(alice).Cancel(mm.CancelRequest(ticket_id=leaving.ticket_id), metadata=alice.auth)
        )
        assert (status, info.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TICKET_MATCHING")
        assert await b.matcher().recover() == 1
        await asyncio.gather(leaving.end(), staying.end())
        assert leaving.final.state == mm.TICKET_STATE_CANCELLED
        # The other player's table was refused too: told so, not queued again.
        assert staying.final.state == mm.TICKET_STATE_EXPIRED
        assert staying.final.end_message == matcher_module.REFUSED
        assert await db.state(staying.ticket_id) == "expired"
