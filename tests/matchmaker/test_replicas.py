"""Two matchmaker replicas, 1,000 tickets from concurrent clients, some cancelling.

Every ticket must end matched exactly once or cancelled, no player may sit at
two tables, and every table must have its tickets' size, rule set and options.
"""

from __future__ import annotations

import asyncio
import json
import random
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from services.common.errors import error_info
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from tests.game.harness import Player, login

from .harness import Store, Waiter, backend, cancel, enqueue, on, store

TICKETS = 1_000
CHANNELS_PER_REPLICA = 3
FAMILIES: list[tuple[mm.MatchMode.ValueType, table_pb2.TableOptions]] = [
    (mm.MATCH_MODE_FIFO, table_pb2.TableOptions()),
    (mm.MATCH_MODE_FIFO, table_pb2.TableOptions(turn_timer_ms=30_000)),
    (mm.MATCH_MODE_RATING, table_pb2.TableOptions(rounds=3)),
]


@dataclass
class Outcome:
    player: Player
    ticket_id: str = ""
    plan: str = "wait"
    """wait, cancel (the Cancel RPC) or drop (the client closes the stream)."""
    final: int = mm.TICKET_STATE_UNSPECIFIED
    told: int = mm.TICKET_STATE_UNSPECIFIED
    """What Cancel answered (plan "cancel")."""
    match: mm.Match | None = None


async def no_table_can_form(db: Store) -> bool:
    """Nothing is half-matched, and no queue holds enough tickets for a table."""
    rows = await db.con.fetch(
        "SELECT family, table_size, count(*) FILTER (WHERE state = 'queued') AS queued,"
        " count(*) FILTER (WHERE state = 'matching') AS matching"
        " FROM tickets GROUP BY family, table_size"
    )
    return all(r["matching"] == 0 and r["queued"] < r["table_size"] for r in rows)


@pytest.mark.timeout(150)
async def test_two_replicas_seat_a_thousand_concurrent_tickets(fresh_dsn: str) -> None:
    rng = random.Random(2024)
    async with backend(fresh_dsn, replicas=2) as b, store(fresh_dsn) as db:
        channels = [
            grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
            for server in b.matchmakers
            for _ in range(CHANNELS_PER_REPLICA)
        ]
        try:
            gate = asyncio.Semaphore(100)

            async def sign_in(i: int) -> Player:
                async with gate:
                    return await login(channels[i % len(channels)], f"Q{i}")

            people = await asyncio.gather(*(sign_in(i) for i in range(TICKETS)))
            outcomes = [
                Outcome(p, plan=rng.choices(["wait", "cancel", "drop"], [8, 1, 1])[0])
                for p in people
            ]
            requests = [
                mm.EnqueueRequest(
                    table_size=rng.choice([2, 3, 4]), mode=mode, options=options, ruleset="cafe"
                )
                for mode, options in (rng.choice(FAMILIES) for _ in range(TICKETS))
            ]
            delays = [rng.uniform(0, 0.3) for _ in range(TICKETS)]
            waiters: dict[str, Waiter] = {}

            async def client(i: int) -> None:
                out, request = outcomes[i], requests[i]
                await asyncio.sleep(delays[i])
                waiter = await enqueue(out.player, **_fields(request))
                out.ticket_id = waiter.ticket_id
                waiters[out.ticket_id] = waiter
                if out.plan == "drop":
                    await asyncio.sleep(rng.uniform(0, 0.05))  # mostly before a match
                    waiter.drop()
                    return
                if out.plan == "cancel":
                    await asyncio.sleep(rng.uniform(0, 0.05))  # mostly before a match
                    # Through a channel of the other replica, now and then.
                    other = channels[(i + CHANNELS_PER_REPLICA) % len(channels)]
                    try:
                        told = await cancel(on(out.player, other), out.ticket_id)
                    except grpc.aio.AioRpcError as error:
                        # Too late: the table is being set up (a refusal saying so).
                        info = error_info(error)
                        assert info is not None and info.reason == "TICKET_MATCHING", error
                        out.told = mm.TICKET_STATE_MATCHED
                    else:
                        out.told = told.state
                await waiter.end(timeout=120)
                out.final, out.match = waiter.final.state, waiter.match

            tasks = [asyncio.create_task(client(i)) for i in range(TICKETS)]
            planned_ends = [t for t, o in zip(tasks, outcomes, strict=True) if o.plan != "wait"]
            await asyncio.wait_for(asyncio.gather(*planned_ends), 60)

            async def all_queued(_: Store) -> bool:
                return all(o.ticket_id for o in outcomes)

            # Once every client has queued and no table can form any more, the
            # last few waiting give up.
            await db.eventually(all_queued, "every client got a ticket", timeout=60)
            await db.eventually(no_table_can_form, "every formable table formed", timeout=60)
            stragglers = [o for o in outcomes if o.plan == "wait" and o.ticket_id]
            leftover = await db.con.fetch("SELECT id FROM tickets WHERE state = 'queued'")
            left_ids = {str(r["id"]) for r in leftover}
            for out in stragglers:
                if out.ticket_id in left_ids:
                    await cancel(out.player, out.ticket_id)
            await asyncio.wait_for(asyncio.gather(*tasks), 60)
        finally:
            for ch in channels:
                await ch.close()

        await check_every_ticket(db, outcomes, requests)


def _fields(request: mm.EnqueueRequest) -> dict[str, object]:
    return {
        "table_size": request.table_size,
        "mode": request.mode,
        "options": request.options,
        "ruleset": request.ruleset,
    }


async def check_every_ticket(
    db: Store, outcomes: list[Outcome], requests: list[mm.EnqueueRequest]
) -> None:
    tickets = {
        str(r["id"]): r
        for r in await db.con.fetch(
            "SELECT id, player_id, state, table_id, seat, seated, table_size, family, ruleset,"
            " options FROM tickets"
        )
    }
    assert len(tickets) == len(outcomes), "one ticket per client"
    states = Counter(r["state"] for r in tickets.values())
    assert set(states) <= {"matched", "cancelled"}, states
    # The run is only meaningful if both outcomes happened a good many times.
    # About 200 clients cancel or drop within 50 ms of queueing, racing a
    # matcher that runs every 20 ms: the faster the machine, the fewer win.
    assert states["matched"] > len(outcomes) // 2 and states["cancelled"] >= 20, states

    # What each client was told agrees with the database.
    for out, request in zip(outcomes, requests, strict=True):
        row = tickets[out.ticket_id]
        assert row["player_id"] == out.player.player_id
        assert row["table_size"] == request.table_size
        if out.plan == "drop":
            continue
        if out.plan == "cancel":
            # Cancel ends a queued ticket; one already being seated (refused as too
            # late) or seated is left as it is and goes on to its table.
            assert out.told in (
                mm.TICKET_STATE_CANCELLED,
                mm.TICKET_STATE_QUEUED,
                mm.TICKET_STATE_MATCHED,
            )
            expected = "cancelled" if out.told == mm.TICKET_STATE_CANCELLED else "matched"
            assert row["state"] == expected, (out, dict(row))
        if out.match is not None:
            assert out.final == mm.TICKET_STATE_MATCHED
            assert row["state"] == "matched"
            assert (out.match.table_id, out.match.seat) == (str(row["table_id"]), row["seat"])
            assert out.match.table_size == request.table_size
        else:
            assert out.final == mm.TICKET_STATE_CANCELLED
            assert row["state"] == "cancelled"

    # Seats: exactly the matched tickets, each once; nobody at two tables.
    seats = await db.con.fetch("SELECT table_id, seat, player_id, is_bot FROM table_seats")
    assert not any(s["is_bot"] for s in seats)
    by_player = Counter(s["player_id"] for s in seats)
    assert max(by_player.values(), default=1) == 1, "a player sits at two tables"
    seat_of = {(str(s["table_id"]), s["seat"]): s["player_id"] for s in seats}
    matched = [r for r in tickets.values() if r["state"] == "matched"]
    assert sorted(seat_of.values()) == sorted(r["player_id"] for r in matched)
    for r in matched:
        assert seat_of[(str(r["table_id"]), r["seat"])] == r["player_id"]
        assert r["seated"] == r["table_size"]
    for r in tickets.values():
        if r["state"] == "cancelled":
            assert r["player_id"] not in by_player, "a cancelled ticket's player is seated"

    # Tables: the right size, one family, its rule set and options.
    by_table: dict[uuid.UUID, list[Any]] = defaultdict(list)
    for r in matched:
        by_table[r["table_id"]].append(r)
    games = {r["id"]: r for r in await db.con.fetch("SELECT id, ruleset, options FROM tables")}
    assert set(games) == set(by_table), "a table without tickets, or tickets without a table"
    for table_id, members in by_table.items():
        sizes = {m["table_size"] for m in members}
        assert len(sizes) == 1 and len(members) == sizes.pop(), members
        assert sorted(m["seat"] for m in members) == list(range(len(members)))
        assert len({m["family"] for m in members}) == 1
        assert len({m["options"] for m in members}) == 1
        table = games[table_id]
        assert table["ruleset"] == members[0]["ruleset"]
        assert json.loads(table["options"]) == json.loads(str(members[0]["options"]))
    created = await db.con.fetch("SELECT table_id, state FROM matches")
    assert {r["table_id"] for r in created} == set(by_table)
    assert {r["state"] for r in created} == {"created"}
