"""`kill -9` of the replica holding a player's stream: nobody closes it, so its
lease runs out, and the other seats, watching through the replica still up, are
told the player is gone; once the player's client resumes on that replica, that
they are back."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc, table_pb2
from services.game.presence import PresenceTimings

from .players import create_table, login
from .processes import CALL_TIMEOUT_S, channels, game_processes

LEASE = PresenceTimings()
"""The production timings: the killed replica's leases run out after `lease_s`."""


async def test_a_killed_replicas_watchers_are_told_gone_once_their_lease_runs_out(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with game_processes(fresh_dsn, 2, tmp_path) as (a, b), channels() as channel:
        players = [await login(channel(b.address), f"P{i}") for i in range(2)]
        table_id = await create_table(channel(b.address), players)

        def watch(address: str, i: int) -> game_pb2_grpc.GameServiceAsyncStub:
            return game_pb2_grpc.GameServiceStub(channel(address)).Watch(
                game_pb2.WatchRequest(table_id=table_id),
                metadata=(("authorization", f"Bearer {players[i].token}"),),
            )

        doomed = watch(a.address, 0)  # P0 follows the table through A
        other = watch(b.address, 1)  # P1 through B

        async def told(seat: int, connected: bool, within: float) -> table_pb2.TableEvent:
            async with asyncio.timeout(within):
                async for reply in other:
                    event = reply.event
                    if event.kind == table_pb2.EVENT_KIND_PLAYER_CONNECTION and (
                        event.seat,
                        event.player_connection.connected,
                    ) == (seat, connected):
                        return event
            raise AssertionError("the stream ended")

        await told(0, True, within=15)
        a.kill()
        killed_at = time.monotonic()
        # Within a lease, a debounce and a sweep (and a beat: the lease may have
        # been renewed just before the kill).
        gone = await told(0, False, within=LEASE.lease_s + LEASE.debounce_s + 10)
        waited = time.monotonic() - killed_at
        assert waited >= LEASE.debounce_s, "told before the debounce"
        stub = game_pb2_grpc.GameServiceStub(channel(b.address))
        view = (
            await stub.GetTable(
                game_pb2.GetTableRequest(table_id=table_id),
                metadata=(("authorization", f"Bearer {players[1].token}"),),
                timeout=CALL_TIMEOUT_S,
            )
        ).view
        assert [s.connected for s in view.seats] == [False, True]
        assert view.version == gone.version == 1
        # P0's client resumes on B from the last seq it had.
        back = watch(b.address, 0)
        await told(0, True, within=10)
        back.cancel()
        other.cancel()
        doomed.cancel()
