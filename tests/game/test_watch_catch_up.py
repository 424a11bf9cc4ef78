"""A watcher that starts far behind a busy table, on a replica that has no live
watcher of it yet, reads the whole log and then goes live: every event exactly
once, in order, and no RESUME_REQUIRED for a client that reads as fast as it
can. (Only a client slower than the table is told to resume.)"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import asyncpg
import grpc
import pytest

from services.common.errors import error_info
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game import eventlog
from services.game.eventlog import READ_BATCH
from services.game.fanout import Fanout
from services.game.retention import purge_finished
from services.game.rules.events import TurnBegan
from services.game.server import GameServer

from .harness import (
    LONG_TURNS_MS,
    WAIT_S,
    Player,
    address,
    create_table,
    login,
    service_auth,
    start_server,
)

BACKLOG = 450
"""Events logged before the watchers start: more than a watcher's queue (256)."""
LIVE = 20
"""Events each watcher must then see live, played on the other replica."""
STARTS = [0, 0, 0, 0, 0, 1, 7, 100, 200, 255]
"""Where the watchers start: all hundreds of events behind the table."""


@pytest.fixture
async def busy_and_quiet(fresh_dsn: str) -> AsyncIterator[tuple[GameServer, GameServer]]:
    """Replica A, whose sweeper plays the bots; replica B, which never sweeps, so
    everything the table does reaches B through the database's notifications."""
    async with contextlib.AsyncExitStack() as running:
        # Each replica is stopped once started, whatever happens after.
        busy = await start_server(fresh_dsn)
        running.push_async_callback(busy.stop, 0)
        quiet = await start_server(fresh_dsn, sweep_interval=3_600.0)
        running.push_async_callback(quiet.stop, 0)
        yield busy, quiet


async def test_watchers_far_behind_catch_up_on_the_other_replica_and_go_live(
    busy_and_quiet: tuple[GameServer, GameServer],
) -> None:
    busy, quiet = busy_and_quiet
    async with (
        grpc.aio.insecure_channel(address(busy)) as on_a,
        grpc.aio.insecure_channel(address(quiet)) as on_b,
    ):
        # Two bots play a long game on A, as fast as the server lets them.
        reply = await tables_pb2_grpc.TableServiceStub(on_a).CreateTable(
            tables_pb2.CreateTableRequest(
                ruleset="cafe",
                options=table_pb2.TableOptions(rounds=20),
                players=[
                    tables_pb2.SeatedPlayer(player_id=f"bot-{i}", display_name="Bot", is_bot=True)
                    for i in range(2)
                ],
            ),
            metadata=service_auth(),
        )
        table_id = reply.table_id
        spectator = await login(on_a, "Spectator")
        on_a_watch = spectator.watch(table_id)
        await on_a_watch.until(lambda e: e.seq >= BACKLOG, timeout=60)
        on_a_watch.cancel()

        on_b_spectator = Player(on_b, spectator.token, spectator.player_id, "Spectator on B")
        for after in STARTS:
            head = (await on_b_spectator.view(table_id)).last_seq
            assert head - after >= BACKLOG - 255
            watcher = on_b_spectator.watch(table_id, after=after)
            live_from = head + LIVE
            await watcher.until(lambda e, last=live_from: e.seq >= last, timeout=60)
            watcher.cancel()
            seqs = [e.seq for e in watcher.events]
            assert seqs == list(range(after + 1, seqs[-1] + 1)), f"from {after}: gap or repeat"


async def test_a_watcher_whose_read_ended_behind_the_fanout_reads_on(fresh_dsn: str) -> None:
    """Two watchers of one table catch up on a replica with no live watcher of it.
    The one whose read of the log went further goes live first, and the fan-out
    hands out events from there; the other, whose read ended earlier, must read
    the log on rather than go live behind the fan-out (it would never be sent
    the events in between)."""
    pool = await asyncpg.create_pool(fresh_dsn, min_size=1, max_size=1)
    try:
        fanout = Fanout(pool, fresh_dsn)
        table_id = uuid.uuid4()
        early, late = fanout.subscribe(table_id, 0), fanout.subscribe(table_id, 10)
        late.position = 11
        assert fanout.caught_up(late)
        early.position = 10
        assert not fanout.caught_up(early), "live behind the fan-out's cursor"
        early.position = 11
        assert fanout.caught_up(early)
        for sub in (early, late):
            fanout.unsubscribe(sub)
    finally:
        await pool.close()


async def test_a_watcher_catching_up_on_a_table_retention_deletes_is_told_it_is_gone(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    """Retention may delete a finished table while a watcher still reads its log:
    the stream ends with NOT_FOUND once the log runs out short of where the table
    was, instead of waiting live for events that can no longer come."""
    players = [await login(channel, f"R{i}") for i in range(2)]
    table_id = await create_table(channel, players, turn_timer_ms=LONG_TURNS_MS)
    key = uuid.UUID(table_id)
    con = await asyncpg.connect(fresh_dsn)
    try:
        first = await con.fetchval("SELECT last_seq FROM tables WHERE id = $1", key) + 1
        seqs = list(range(first, first + 2 * READ_BATCH + 500))
        await con.execute(
            "INSERT INTO table_events (table_id, seq, version, kind, payload)"
            " SELECT $1, s, 2, 'TurnBegan', $2 FROM unnest($3::bigint[]) AS s",
            key,
            eventlog.encode(TurnBegan(0, 1, 0)),
            seqs,
        )
        await con.execute(
            "UPDATE tables SET last_seq = $2, status = 'finished', turn_deadline = NULL,"
            " finished_at = now() - interval '40 days' WHERE id = $1",
            key,
            seqs[-1],
        )
        watcher = players[0].watch(table_id)
        for _ in range(READ_BATCH // 2):
            assert await watcher.next() is not None
        assert await purge_finished(con, older_than_s=30 * 86_400.0) == 1
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            async with asyncio.timeout(WAIT_S):
                while await watcher.next() is not None:
                    pass
    finally:
        await con.close()
    info = error_info(ended.value)
    assert (ended.value.code(), info.reason if info else None) == (
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )
    got = [e.seq for e in watcher.events]
    assert got == list(range(1, len(got) + 1)) and len(got) < seqs[-1]


async def test_watchers_get_events_while_the_listening_connection_is_down(
    fresh_dsn: str,
) -> None:
    """The replica's LISTEN connection cannot connect (its address refuses), but its
    pool can read: the periodic check still brings the table's moves to a watcher."""
    async with contextlib.AsyncExitStack() as running:
        # Stopped in the reverse order of their starts, each only once started.
        server = await start_server(fresh_dsn)
        running.push_async_callback(server.stop, 0)
        pool = await asyncpg.create_pool(fresh_dsn, min_size=1, max_size=2)
        running.push_async_callback(pool.close)
        fanout = Fanout(pool, "postgresql://postgres@127.0.0.1:9/nowhere", poll_interval=0.1)
        await fanout.start()
        running.push_async_callback(fanout.stop)
        async with grpc.aio.insecure_channel(address(server)) as channel:
            players = [await login(channel, f"P{i}") for i in range(2)]
            table_id = await create_table(channel, players, turn_timer_ms=LONG_TURNS_MS)
            view = await players[0].view(table_id)
            sub = fanout.subscribe(uuid.UUID(table_id), view.last_seq)
            assert fanout.caught_up(sub)
            mover = next(p for p in players if p.seat == view.current_seat)
            await mover.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
            async with asyncio.timeout(WAIT_S):
                while sub.queue.empty():
                    await sub.queue.arrival()
            live = sub.queue.pop()
            assert live is not None and live.seq == view.last_seq + 1
            assert not fanout.connected.is_set()
            fanout.unsubscribe(sub)


async def test_an_event_this_replica_cannot_read_sends_its_watchers_to_resume(
    fresh_dsn: str,
) -> None:
    """A newer replica logged an event kind this one does not know: its live
    watchers are told to resume, instead of waiting for news that never comes."""
    async with contextlib.AsyncExitStack() as running:
        server = await start_server(fresh_dsn)
        running.push_async_callback(server.stop, 0)
        con = await asyncpg.connect(fresh_dsn)
        running.push_async_callback(con.close)
        async with grpc.aio.insecure_channel(address(server)) as channel:
            players = [await login(channel, f"P{i}") for i in range(2)]
            table_id = await create_table(channel, players, turn_timer_ms=LONG_TURNS_MS)
            view = await players[0].view(table_id)
            call = players[0].game.Watch(
                game_pb2.WatchRequest(table_id=table_id, after_seq=view.last_seq - 1),
                metadata=players[0].auth,
                timeout=WAIT_S,
            )
            assert (await call.read()).event.seq == view.last_seq  # live from here
            async with con.transaction():
                # The watcher's own presence may have taken the next seq meanwhile.
                last = await con.fetchval(
                    "SELECT last_seq FROM tables WHERE id = $1 FOR UPDATE", uuid.UUID(table_id)
                )
                seq = last + 1
                await con.execute(
                    "INSERT INTO table_events (table_id, seq, version, kind, payload)"
                    " VALUES ($1, $2, $3, 'KindFromANewerRelease', '{}')",
                    uuid.UUID(table_id),
                    seq,
                    view.version,
                )
                await con.execute(
                    "UPDATE tables SET last_seq = $2 WHERE id = $1", uuid.UUID(table_id), seq
                )
                await con.execute("SELECT pg_notify('table_events', $1)", f"{table_id}:{seq}")
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                while True:  # the readable events first (a presence event, say)
                    assert await call.read() is not grpc.aio.EOF
            info = error_info(ended.value)
            assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
            assert info is not None and info.reason == "RESUME_REQUIRED"
            assert info.metadata["after_seq"] == str(seq - 1)
