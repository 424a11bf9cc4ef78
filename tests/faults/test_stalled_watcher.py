"""A watcher whose network stalls (it takes no more bytes) holds up neither the
table nor the other watchers.

What happens to the stalled stream depends on the HTTP/2 window its client
announced. grpcio announces 4 MiB per stream, more than the longest game's events
take (about 60 bytes each on the wire, some 8,000 events in 100 deals): the server
writes the whole game into the stalled connection, keeps nothing for it, and the
watcher gets every event, and the end of the stream, once its network is back. A
client with a 64 KiB window (the HTTP/2 default; grpcio without BDP probing)
blocks the server's writes after one window; the server then queues up to
`Fanout.queue_size` more events for it and, once that queue overflows, drops them
and tells it to resume from its last seq (UNAVAILABLE, RESUME_REQUIRED, ErrorInfo
after_seq)."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from pathlib import Path
from typing import Any

import asyncpg
import grpc

from services.common.errors import error_info
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc
from services.game.fanout import Fanout

from .players import ResumingWatcher, create_table, login
from .processes import BOT_TURNS_MS, channels, game_processes, until
from .proxy import Link, Proxy, data_bytes, grpc_messages, initial_window, stream_carrying
from .stored import assert_stream_is_log, assert_whole

CAP = 400
"""Two server bots play until one of them reaches this many points, 40 to 100
deals: some 3,000 to 7,000 events, well past a 64 KiB window (about 1,300
events) plus the server's queue. (A number of deals is at most 20, too few.)"""
QUEUE_SIZE: int = inspect.signature(Fanout).parameters["queue_size"].default
SMALL_WINDOW = [("grpc.http2.bdp_probe", 0)]
"""grpcio then announces the HTTP/2 default window, 64 KiB, and never grows it."""


def watch_stream(link: Link, table_id: str) -> tuple[int, list[bytes]]:
    """The stream id of the Watch on ``link``, and the messages the server sent on it."""
    stream = stream_carrying(bytes(link.up), table_id.encode())
    assert stream is not None
    return stream, grpc_messages(bytes(link.down), stream)


async def read_to_end(call: Any) -> tuple[list[int], grpc.aio.AioRpcError | None]:
    seqs: list[int] = []
    try:
        async with asyncio.timeout(30):
            async for reply in call:
                seqs.append(reply.event.seq)
    except grpc.aio.AioRpcError as error:
        return seqs, error
    return seqs, None


async def test_a_stalled_watcher_holds_up_nothing_and_is_bounded(
    fresh_dsn: str, tmp_path: Path
) -> None:
    con = await asyncpg.connect(fresh_dsn)
    async with game_processes(fresh_dsn, 1, tmp_path) as (replica,), channels() as channel:
        proxy = Proxy(replica.address)
        try:
            through = await proxy.start()
            direct = channel(replica.address)
            fast = await login(direct, "Fast")
            # Two stalling watchers, each on a connection of its own through the proxy.
            big_channel = channel(through)
            small_channel = channel.with_options(through, SMALL_WINDOW)
            big = await login(big_channel, "Stalled, grpcio defaults")
            small = await login(small_channel, "Stalled, 64 KiB window")
            big_link, small_link = proxy.links
            table_id = await create_table(
                direct, ["bot-0", "bot-1"], elimination_cap=CAP, turn_timer_ms=BOT_TURNS_MS
            )

            # From now on the stalled watchers' network passes nothing to them.
            proxy.hold()
            passed = [big_link.passed, small_link.passed]
            big_call = game_pb2_grpc.GameServiceStub(big_channel).Watch(
                game_pb2.WatchRequest(table_id=table_id), metadata=big.metadata
            )
            small_call = game_pb2_grpc.GameServiceStub(small_channel).Watch(
                game_pb2.WatchRequest(table_id=table_id), metadata=small.metadata
            )
            watcher = ResumingWatcher(fast, table_id, [replica.address], channel)
            async with asyncio.timeout(60):
                seen = await watcher.run()

            # The game ran to its end and the other watcher saw all of it, in one
            # stream, while neither stalled watcher got a byte.
            log = await assert_whole(con, table_id)
            status = await con.fetchval(
                "SELECT status FROM tables WHERE id = $1", uuid.UUID(table_id)
            )
            assert status == "finished" and log[-1].kind == "GameEnded"
            assert watcher.ends == []
            assert_stream_is_log(seen, log)
            assert [big_link.passed, small_link.passed] == passed

            # grpcio's 4 MiB window takes the whole game: the server sends everything.
            assert initial_window(bytes(big_link.up)) == 4 * 1024 * 1024
            await until(
                lambda: len(watch_stream(big_link, table_id)[1]) == len(log),
                "the whole game in the 4 MiB window",
            )
            # The 64 KiB one: the server fills that window and not one byte more.
            window = initial_window(bytes(small_link.up))
            assert window == 65_535
            small_stream, _ = watch_stream(small_link, table_id)
            await until(
                lambda: data_bytes(bytes(small_link.down), small_stream) >= window,
                "the server to fill the 64 KiB window",
            )
            await asyncio.sleep(0.5)  # were it to send more, it would have by now
            assert data_bytes(bytes(small_link.down), small_stream) == window
            _, small_sent = watch_stream(small_link, table_id)
            assert len(small_sent) < len(log) - QUEUE_SIZE - 1

            # The network comes back.
            proxy.release()
            big_seqs, big_end = await read_to_end(big_call)
            assert big_end is None and big_seqs == list(range(1, len(log) + 1))

            small_seqs, small_end = await read_to_end(small_call)
            assert small_end is not None, "the stalled stream was kept whole"
            info = error_info(small_end)
            assert small_end.code() == grpc.StatusCode.UNAVAILABLE, small_end
            assert info is not None and info.reason == "RESUME_REQUIRED", small_end
            after = int(info.metadata["after_seq"])
            assert small_seqs == list(range(1, after + 1))
            # Bounded, exactly: the whole messages of the window and the one the server
            # was writing when the window closed. Its queue was dropped when it filled:
            # the rest of the game was left to the log.
            assert after == len(small_sent) + 1, (len(small_sent), after)

            # Resuming from after_seq gives the rest, no gap, no repeat.
            resumed = ResumingWatcher(small, table_id, [replica.address], channel)
            resumed.position = after
            async with asyncio.timeout(30):
                rest = await resumed.run()
            assert [e.seq for e in rest] == list(range(after + 1, len(log) + 1))
        finally:
            await proxy.close()
            await con.close()
