"""Live watchers are never left waiting in silence: a replica cut off from the
database while another plays on sends them to resume, and a watcher too slow for
its table is sent to resume with nothing kept for it."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import grpc

from services.common.errors import error_info
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game import subscription
from services.game.fanout import Fanout, LoggedEvent
from services.game.rules.events import TurnBegan
from tests.faults.proxy import Proxy

from .harness import LONG_TURNS_MS, WAIT_S, address, create_table, login, start_server

CUT_OFF_S = 1.0


def through(dsn: str, proxy_address: str) -> str:
    """``dsn`` with its host and port replaced by the proxy's."""
    parts = urlsplit(dsn)
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=f"{user}{proxy_address}"))


def upstream(dsn: str) -> str:
    parts = urlsplit(dsn)
    return f"{parts.hostname or '127.0.0.1'}:{parts.port or 5432}"


async def test_a_replica_cut_off_from_the_database_sends_its_live_watchers_to_resume(
    fresh_dsn: str,
) -> None:
    """Replica B reaches PostgreSQL through a proxy that stops answering; replica A
    plays on. B's live watcher is told to resume (it would otherwise wait for
    ever), and resumed on A it misses nothing."""
    async with contextlib.AsyncExitStack() as running:
        a = await start_server(fresh_dsn)
        running.push_async_callback(a.stop, 0)
        proxy = Proxy(upstream(fresh_dsn))
        b = await start_server(through(fresh_dsn, await proxy.start()), watch_cut_off_s=CUT_OFF_S)
        running.push_async_callback(b.stop, 0)
        running.push_async_callback(proxy.close)  # first: B's connections end, not hang
        on_a = await running.enter_async_context(grpc.aio.insecure_channel(address(a)))
        on_b = await running.enter_async_context(grpc.aio.insecure_channel(address(b)))
        players = [await login(on_a, f"P{i}") for i in range(2)]
        table_id = await create_table(on_a, players, turn_timer_ms=LONG_TURNS_MS)
        view = await players[0].view(table_id)
        mover = next(p for p in players if p.seat == view.current_seat)
        watcher = players[1]
        watcher.use(on_b)
        stream = watcher.watch(table_id, view.last_seq)
        drew = await mover.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
        seen = await stream.until(lambda e: e.version == drew.version)  # live on B

        proxy.hold()  # B's queries go out and nothing comes back
        card = next(c.id for c in drew.view.hand if c.code != "JK")  # a joker stays
        await mover.call("Discard", game_pb2.DiscardRequest(table_id=table_id, card_id=card))
        try:
            async with asyncio.timeout(WAIT_S):
                while await stream.next() is not None:
                    pass
        except grpc.aio.AioRpcError as error:
            info = error_info(error)
            assert (error.code(), info.reason if info else None) == (
                grpc.StatusCode.UNAVAILABLE,
                "RESUME_REQUIRED",
            )
            assert error.details() == subscription.CUT_OFF
            resume_at = int(info.metadata["after_seq"]) if info else -1
        else:
            raise AssertionError("the stream ended with OK")
        assert resume_at == stream.events[-1].seq >= seen.seq

        watcher.use(on_a)  # where the client reconnects to, past the cut-off replica
        resumed = watcher.watch(table_id, resume_at)
        after = await resumed.until(lambda e: e.kind == table_pb2.EVENT_KIND_DISCARDED)
        assert [e.seq for e in resumed.events] == list(range(resume_at + 1, after.seq + 1))
        resumed.cancel()
        stream.cancel()


async def test_a_watcher_too_slow_for_its_table_is_sent_to_resume_holding_nothing(
    fresh_dsn: str,
) -> None:
    pool = await asyncpg.create_pool(fresh_dsn, min_size=0, max_size=1)
    try:
        fan = Fanout(pool, fresh_dsn, queue_size=8)
        table_id = uuid.uuid4()
        sub = fan.subscribe(table_id, 0)
        assert fan.caught_up(sub)
        now = datetime.now(UTC)
        events = [LoggedEvent(seq, seq, TurnBegan(0, seq, 0), now) for seq in range(1, 21)]
        fan.published(table_id, events[:5])
        assert sub.ended is None
        fan.published(table_id, events[5:])  # more than its queue holds
        assert sub.ended == subscription.FELL_BEHIND
        assert sub.queue.pop() is None and sub.queue.empty(), "only the wake-up is kept"
        fan.unsubscribe(sub)
    finally:
        await pool.close()


async def test_a_pool_busy_with_moves_is_no_cut_off(fresh_dsn: str) -> None:
    """Every pooled connection taken (moves waiting on locks, say) while the
    database answers: the listening connection still reaches it, and live
    watchers stay."""
    pool = await asyncpg.create_pool(fresh_dsn, min_size=0, max_size=1)
    fan = Fanout(pool, fresh_dsn, poll_interval=0.05, cut_off_s=0.5)
    await fan.start()
    try:
        await asyncio.wait_for(fan.connected.wait(), WAIT_S)
        sub = fan.subscribe(uuid.uuid4(), 0)
        assert fan.caught_up(sub)
        async with pool.acquire() as con:  # the pool's one connection, for 4 cut-offs
            await con.execute("SELECT pg_sleep(2)")
        assert sub.ended is None, sub.ended
        fan.unsubscribe(sub)
    finally:
        await fan.stop()
        await pool.close()
