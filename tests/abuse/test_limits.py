"""Rate limits per player and per connection, and open streams per player, on
real servers with low limits: the call past the limit is refused with
RESOURCE_EXHAUSTED and a reason and wait an app can use, others are not
affected, and the caller gets through again once the bucket refills."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import pytest

from services.common.config import ConfigError, Env
from services.common.errors import error_info
from services.common.limits import Buckets, Limits, StreamCounts
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, game_pb2
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.game.server import GameServer
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer
from tests.game.harness import (
    SECRET,
    WAIT_S,
    address,
    create_table,
    login,
    start_server,
)
from tests.matchmaker.harness import host, stub

EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
SLOW = 0.5
"""Tokens per second in the tests: a handful of local calls never earns a new one."""


def own_connection(server: GameServer | MatchmakerServer) -> grpc.aio.Channel:
    """A channel with a TCP connection of its own (channels otherwise share one)."""
    return grpc.aio.insecure_channel(
        f"127.0.0.1:{server.port}", options=[("grpc.use_local_subchannel_pool", 1)]
    )


async def rate_limited(call: Awaitable[Any]) -> int:
    """The call is refused for its rate; the wait the server asks for, in ms."""
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await asyncio.wait_for(call, WAIT_S)
    assert failure.value.code() is EXHAUSTED, failure.value
    info = error_info(failure.value)
    assert info is not None and info.reason == "RATE_LIMITED", info
    assert failure.value.details(), "a refusal says why in a sentence"
    retry_ms = int(info.metadata["retry_after_ms"])
    assert 0 < retry_ms <= 1000 / SLOW
    return retry_ms


async def after_refill(call: Callable[[], Awaitable[Any]], retry_ms: int) -> Any:
    """Wait as told, then the call goes through (a few more tries bound slow machines)."""
    await asyncio.sleep(retry_ms / 1000)
    for _ in range(5):
        try:
            return await asyncio.wait_for(call(), WAIT_S)
        except grpc.aio.AioRpcError as error:
            if error.code() is not EXHAUSTED:
                raise
            await asyncio.sleep(1 / SLOW)
    raise AssertionError("still refused after the bucket refilled")


@contextlib.asynccontextmanager
async def game(dsn: str, limits: Limits) -> AsyncIterator[GameServer]:
    server = await start_server(dsn, limits=limits)
    try:
        yield server
    finally:
        await server.stop(0)


async def test_a_player_past_their_rate_is_refused_until_the_bucket_refills(
    fresh_dsn: str,
) -> None:
    async with (
        game(fresh_dsn, Limits(player_rate=SLOW, player_burst=3)) as server,
        grpc.aio.insecure_channel(address(server)) as channel,
        own_connection(server) as elsewhere,
    ):
        alice, bob = await login(channel, "Alice"), await login(channel, "Bob")
        table_id = await create_table(channel, [alice, bob])
        get = game_pb2.GetTableRequest(table_id=table_id)
        for _ in range(3):
            await alice.view(table_id)
        retry_ms = await rate_limited(alice.call("GetTable", get))
        # Per player, whatever the connection: Alice from elsewhere is refused too...
        alice_elsewhere = type(alice)(elsewhere, alice.token, alice.player_id, alice.name)
        await rate_limited(alice_elsewhere.call("GetTable", get))
        # ...while Bob on the same connection is not.
        await bob.view(table_id)
        # A refused action changes nothing.
        before = await bob.view(table_id)
        view = await after_refill(lambda: alice.view(table_id), retry_ms)
        assert view.version == before.version


async def test_a_connection_past_its_rate_is_refused_login_included(fresh_dsn: str) -> None:
    async with (
        game(fresh_dsn, Limits(peer_rate=SLOW, peer_burst=3)) as server,
        own_connection(server) as channel,
        own_connection(server) as other,
    ):
        auth = auth_pb2_grpc.AuthServiceStub(channel)
        request = auth_pb2.LoginRequest(device_id="device-flood", display_name="Flood")
        for _ in range(3):
            await auth.Login(request, timeout=WAIT_S)
        retry_ms = await rate_limited(auth.Login(request, timeout=WAIT_S))
        # Another connection has its own bucket, and the game's own services are not limited.
        alice, bob = await login(other, "Alice"), await login(other, "Bob")
        await create_table(channel, [alice, bob])
        await after_refill(lambda: auth.Login(request, timeout=WAIT_S), retry_ms)


async def stream_refused(call: Any) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await asyncio.wait_for(call.read(), WAIT_S)
    assert failure.value.code() is EXHAUSTED, failure.value
    info = error_info(failure.value)
    assert info is not None and info.reason == "TOO_MANY_STREAMS", info
    assert info.metadata["limit"]


async def eventually_opens(open_stream: Callable[[], Any]) -> Any:
    """A stream opens once a place is given back (the server learns of a cancel soon)."""
    async with asyncio.timeout(WAIT_S):
        while True:
            call = open_stream()
            try:
                first = await call.read()
            except grpc.aio.AioRpcError as error:
                if error.code() is not EXHAUSTED:
                    raise
                await asyncio.sleep(0.05)
                continue
            assert first is not grpc.aio.EOF
            return call


async def test_watch_streams_per_player_are_limited_and_given_back(fresh_dsn: str) -> None:
    async with (
        game(fresh_dsn, Limits(streams_per_player=2)) as server,
        grpc.aio.insecure_channel(address(server)) as channel,
    ):
        alice, bob = await login(channel, "Alice"), await login(channel, "Bob")
        table_id = await create_table(channel, [alice, bob])
        watches = [alice.watch(table_id) for _ in range(2)]
        for w in watches:
            assert await asyncio.wait_for(w.next(), WAIT_S) is not None
        await stream_refused(alice.watch(table_id).call)
        # Bob has his own allowance.
        bobs = bob.watch(table_id)
        assert await asyncio.wait_for(bobs.next(), WAIT_S) is not None
        watches[0].cancel()
        again = await eventually_opens(lambda: alice.watch(table_id).call)
        for call in (again, watches[1].call, bobs.call):
            call.cancel()


async def test_a_full_replica_refuses_streams_with_a_time_to_come_back(fresh_dsn: str) -> None:
    async with (
        game(fresh_dsn, Limits(streams_per_player=0, streams_per_replica=2)) as server,
        grpc.aio.insecure_channel(address(server)) as channel,
    ):
        alice, bob = await login(channel, "Alice"), await login(channel, "Bob")
        table_id = await create_table(channel, [alice, bob])
        watches = [alice.watch(table_id), bob.watch(table_id)]
        for w in watches:
            assert await asyncio.wait_for(w.next(), WAIT_S) is not None
        with pytest.raises(grpc.aio.AioRpcError) as full:
            await bob.watch(table_id).call.read()
        info = error_info(full.value)
        assert full.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert info is not None and info.reason == "SERVER_FULL"
        assert int(info.metadata["retry_after_ms"]) > 0
        watches[0].cancel()
        again = await eventually_opens(lambda: bob.watch(table_id).call)
        for call in (again, watches[1].call):
            call.cancel()


REQUEUES = 10
"""Stream closed, place given back, queue again: enough rounds to meet the race
between a closed stream's cancel and the next ticket."""


async def test_matchmaker_streams_per_player_are_limited(fresh_dsn: str) -> None:
    async with contextlib.AsyncExitStack() as running:
        # Each server is stopped once started, whatever happens after.
        game_server = await start_server(fresh_dsn)
        running.push_async_callback(game_server.stop, 0)
        matchmaker = MatchmakerServer(
            MatchmakerConfig(
                dsn=fresh_dsn,
                secret=SECRET,
                game_target=address(game_server),
                limits=Limits(streams_per_player=1),
            )
        )
        await matchmaker.start()
        running.push_async_callback(matchmaker.stop, 0)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{matchmaker.port}") as channel:
            alice = await login(channel, "Alice")
            hosting = await host(alice, table_size=2)
            await stream_refused(
                stub(alice).Enqueue(mm.EnqueueRequest(table_size=2), metadata=alice.auth)
            )

            def enqueue() -> Any:
                return stub(alice).Enqueue(mm.EnqueueRequest(table_size=2), metadata=alice.auth)

            # Once the server gives the place back, the closed stream's ticket is
            # gone too: queueing again is never refused as a second live ticket.
            close = hosting.drop
            for _ in range(REQUEUES):
                close()
                close = (await eventually_opens(enqueue)).cancel
            close()


# --- the pieces, with a clock of the test's own ---------------------------------------


def test_a_bucket_grants_its_burst_then_one_call_per_refill() -> None:
    buckets = Buckets(rate=2.0, burst=3)
    assert [buckets.take("p", 0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert buckets.take("p", 0.0) == pytest.approx(0.5)
    assert buckets.take("p", 0.25) == pytest.approx(0.25)
    assert buckets.take("p", 0.5) == 0.0
    assert buckets.take("q", 0.5) == 0.0, "each key has its own bucket"


def test_idle_buckets_are_evicted_and_their_number_is_capped() -> None:
    buckets = Buckets(rate=10.0, burst=10, max_buckets=50)
    for i in range(40):
        buckets.take(f"player-{i}", 0.0)
    assert len(buckets) == 40
    # A second later every bucket has refilled: they are dropped as new calls come.
    buckets.take("late", 1.0)
    assert len(buckets) == 1
    for i in range(500):
        buckets.take(f"flood-{i}", 1.0)
    assert len(buckets) == 50


def test_stream_counts_forget_players_with_no_stream() -> None:
    counts = StreamCounts(ceiling=2)
    assert counts.open("p") is None and counts.open("p") is None
    assert counts.open("p") == "TOO_MANY_STREAMS"
    counts.close("p")
    counts.close("p")
    assert len(counts) == 0 and counts.total == 0 and counts.open("p") is None


def test_a_full_replica_turns_every_player_away_until_a_stream_ends() -> None:
    counts = StreamCounts(ceiling=2, total_ceiling=3)
    assert [counts.open(p) for p in ("a", "a", "b")] == [None, None, None]
    assert counts.open("c") == "SERVER_FULL"
    assert counts.open("a") == "SERVER_FULL"  # full first, whoever asks
    counts.close("c")  # never opened: gives nothing back
    assert counts.total == 3
    counts.close("a")
    assert counts.open("c") is None and counts.total == 3


def test_zero_means_no_limit() -> None:
    buckets = Buckets(rate=0.0, burst=1)
    assert all(buckets.take("p", 0.0) == 0.0 for _ in range(1000))
    assert len(buckets) == 0
    counts = StreamCounts(ceiling=0, total_ceiling=0)
    assert all(counts.open("p") is None for _ in range(100))


def test_limits_from_the_environment() -> None:
    assert Limits.from_env(Env({})) == Limits()
    limits = Limits.from_env(
        Env(
            {
                "RUMMY_RATE_PER_PLAYER": "5/7",
                "RUMMY_RATE_PER_PEER": "0.5",
                "RUMMY_STREAMS_PER_PLAYER": "3",
                "RUMMY_STREAMS_PER_REPLICA": "40",
            }
        )
    )
    assert limits.streams_per_replica == 40
    assert (limits.player_rate, limits.player_burst) == (5.0, 7)
    assert (limits.peer_rate, limits.peer_burst) == (0.5, 1)
    assert limits.streams_per_player == 3
    for bad in ("fast", "5/0", "-1/3", "nan/3", "5/x"):
        with pytest.raises(ConfigError, match="RUMMY_RATE_PER_PLAYER"):
            Limits.from_env(Env({"RUMMY_RATE_PER_PLAYER": bad}))
