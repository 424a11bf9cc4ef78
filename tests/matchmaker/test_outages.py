"""The database goes away under a matchmaker replica (behind a proxy that can cut
it): waiting players keep their streams and their place, the matching loop
backs off instead of spinning, and the ticket LISTEN connection comes back."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import pytest
from structlog.testing import capture_logs

from services.matchmaker import matcher as matcher_module
from services.matchmaker import standing, streams, tickets
from services.matchmaker.matcher import backoff_s

from .database_proxy import database_proxy
from .harness import WAIT_S, Store, backend, enqueue, players, store


class Failures:
    """Counts the exceptions a coroutine function raises (and passes them on)."""

    def __init__(self) -> None:
        self.count = 0

    def around(self, real: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        """``real``, counted (a function: as a class attribute, it is a method)."""

        async def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                return await real(*args, **kwargs)
            except Exception:
                self.count += 1
                raise

        return counted


async def until(check: Callable[[], bool], what: str) -> None:
    """Wait (bounded) for ``check()`` to hold; fail naming ``what`` if it never does."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while not check():
        assert loop.time() < deadline, f"never happened: {what}"
        await asyncio.sleep(0.02)


async def test_a_waiting_stream_rides_out_a_database_outage(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Progress (and the reads behind it) every 50 ms: the outage is felt at once.
    monkeypatch.setattr(streams, "PROGRESS_EVERY_S", 0.05)
    standings, reads = Failures(), Failures()
    monkeypatch.setattr(streams, "standing", standings.around(standing.standing))
    monkeypatch.setattr(tickets.Reads, "get", reads.around(tickets.Reads.get))
    async with (
        backend(fresh_dsn, replicas=0) as b,
        database_proxy(fresh_dsn) as (proxy, proxied),
        store(fresh_dsn) as db,
    ):
        replica = await b.add_replica(dsn=proxied, matching=False)
        alice, bob = await players(b.channel(replica), 2)
        waiting = await enqueue(alice, table_size=2)
        await waiting.until("progress")
        proxy.cut()
        await until(lambda: standings.count >= 1, "a progress message meets the outage")
        # Something happened to the ticket (as far as the stream knows): reading
        # it fails too, and the stream goes on waiting after that as well.
        b.matchmakers[replica].wakeups.wake([uuid.UUID(waiting.ticket_id)])
        await until(lambda: reads.count >= 1, "the stream reads its ticket in the outage")
        after_read = standings.count
        await until(lambda: standings.count > after_read, "the stream waits on")
        proxy.restore()
        await waiting.until("progress")
        # The player kept their place: the ticket was never cancelled, and is seated.
        assert await db.state(waiting.ticket_id) == "queued"
        partner = await enqueue(bob, table_size=2)
        assert await b.matcher(replica).match_once() == 2
        await asyncio.gather(waiting.end(), partner.end())
        assert waiting.match is not None and partner.match is not None
        assert waiting.match.table_id == partner.match.table_id


async def test_the_matching_loop_backs_off_while_the_database_is_down(fresh_dsn: str) -> None:
    async with (
        backend(fresh_dsn, replicas=0) as b,
        database_proxy(fresh_dsn) as (proxy, proxied),
        store(fresh_dsn) as db,
    ):
        replica = await b.add_replica(dsn=proxied, matching=True)
        interval = b.matcher(replica)._interval
        alice, bob = await players(b.channel(replica), 2)
        with capture_logs() as logs:

            def passes() -> list[MutableMapping[str, Any]]:
                """The loop's failed passes (a batch being settled logs no pause)."""
                return [e for e in logs if e["event"] == "matching_failed" and "retry_in_s" in e]

            proxy.cut()
            await until(
                lambda: any(e["retry_in_s"] == matcher_module.BACKOFF_MAX_S for e in passes()),
                "the pause between failed passes grows to its longest",
            )
            down = passes()
            assert [e["failures"] for e in down] == list(range(1, len(down) + 1))
            assert [e["retry_in_s"] for e in down] == [
                backoff_s(interval, n) for n in range(1, len(down) + 1)
            ]
            assert all(e["log_level"] == "warning" for e in down)
            proxy.restore()
            # Back: the loop matches again...
            waiters = [await enqueue(p, table_size=2) for p in (alice, bob)]
            await asyncio.gather(*(w.end() for w in waiters))
            assert all(w.match is not None for w in waiters)
            # ...and the next outage starts again with a short pause.
            seen = len(passes())
            proxy.cut()
            await until(lambda: len(passes()) > seen, "a pass fails in the second outage")
            assert passes()[seen]["failures"] == 1
            assert passes()[seen]["retry_in_s"] == backoff_s(interval, 1)
            proxy.restore()

        async def matched(s: Store) -> bool:
            return await s.count("SELECT count(*) FROM tickets WHERE state = 'matched'") == 2

        await db.eventually(matched, "both tickets are matched")


async def test_the_ticket_listener_comes_back_after_its_listen_fails(fresh_dsn: str) -> None:
    async with (
        backend(fresh_dsn, replicas=0) as b,
        database_proxy(fresh_dsn) as (proxy, proxied),
        store(fresh_dsn) as db,
    ):
        # The connection drops as the replica's first LISTEN goes out.
        proxy.drop_statement(b'LISTEN "tickets"')
        replica = await b.add_replica(dsn=proxied, matching=False)
        await until(lambda: proxy.resets == 1, "the first LISTEN is cut off")

        async def listening(s: Store) -> bool:
            return bool(
                await s.count(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND query = 'LISTEN \"tickets\"' AND state = 'idle'"
                )
            )

        await db.eventually(listening, "the replica listens again")
        # And it serves on (its streams also have the once-a-second sweep, so this
        # part says nothing of LISTEN itself: the check above does).
        alice, bob = await players(b.channel(replica), 2)
        waiters = [await enqueue(p, table_size=2) for p in (alice, bob)]
        assert await b.matcher(replica).match_once() == 2
        await asyncio.gather(*(w.end() for w in waiters))
        assert all(w.match is not None for w in waiters)
