"""The client's connection: a Watch stream and a playing bot survive a server restart."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

import grpc
import pytest

from clients.cli.bots import BotPlayer, Stats
from clients.cli.channels import open_channel
from clients.cli.connection import Connection
from clients.cli.matchmaking import QueueChoice
from services.common.auth import issue_token
from services.common.limits import Limits
from services.common.pb.rummy.v1 import table_pb2
from services.common.wire.refusals import Refusal
from services.game.server import GameConfig, GameServer
from tests.faults.proxy import Proxy
from tests.game.harness import (
    SECRET,
    UNLIMITED,
    address,
    create_table,
    login,
    play_turns,
    start_server,
)

from .front import WATCH, Failing, ended, front
from .harness import servers

KEEPALIVE_MS = 300
"""A client keepalive for the test: a dead connection is found in about 0.6 s."""
GIVE_UP_S = 1.0
"""The client's give-up bound in the tests of a stream that never comes back."""
MOST_WATCHES = 8
"""Watch attempts a client giving up after `GIVE_UP_S` stays under: its backoff
waits at least 0.14, 0.28, 0.56 and 1.12 s between its first five."""
UNDECODABLE = Failing(WATCH, grpc.StatusCode.INTERNAL, "Cannot decode an event of this table.")


class Follower:
    """A client's Watch of a table from its first event, read in the background."""

    def __init__(self, conn: Connection, table_id: str) -> None:
        self.seqs: list[int] = []
        self.views: list[table_pb2.TableView] = []
        self.task = asyncio.create_task(self._follow(conn, table_id))

    async def _follow(self, conn: Connection, table_id: str) -> None:
        async for item in conn.watch(table_id, 0):
            if isinstance(item, table_pb2.TableView):
                self.views.append(item)
            else:
                self.seqs.append(item.seq)

    async def until(self, seq: int) -> None:
        async with asyncio.timeout(30):
            while not self.seqs or self.seqs[-1] < seq:
                await asyncio.sleep(0.02)

    async def stop(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def followed(spectator: Connection, table_id: str) -> tuple[Follower, list[str]]:
    """``spectator`` signed in and following ``table_id``, and what it is told."""
    notes: list[str] = []
    spectator.notify = notes.append
    await spectator.login()
    return Follower(spectator, table_id), notes


async def test_a_game_goes_on_across_a_game_server_restart(fresh_dsn: str) -> None:
    async with servers(fresh_dsn, bot_delay_ms=100) as running:
        stats = Stats()
        bot = BotPlayer(running.address, "Robo", QueueChoice(players=2, bots=True), stats)
        playing = asyncio.create_task(bot.run(games=1))
        spectator = Connection(running.address, "device-spectator-1", "Eve")
        following: Follower | None = None
        try:
            async with asyncio.timeout(30):
                while not stats.tables:
                    await asyncio.sleep(0.05)
            table_id = next(iter(stats.tables))
            notes: list[str] = []
            spectator.notify = notes.append
            await spectator.login()
            spectator.use_game(running.game_address)
            following = Follower(spectator, table_id)
            # Early: a game can end in 8 events, and must not end before the restart.
            await following.until(2)
            await running.restart_game()
            async with asyncio.timeout(90):
                await playing
                await following.task
            seqs, views = following.seqs, following.views
        finally:  # stopped whatever failed, so nothing plays on into later tests
            playing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await playing
            if following is not None:
                await following.stop()
            await spectator.close()
            await bot.conn.close()

    assert stats.errors == 0, stats.messages
    assert len(stats.games) == 1
    assert seqs == list(range(1, len(seqs) + 1)), "no gap and no duplicate"
    reconnected = any("reconnecting" in n for n in notes) and any("Reconnected" in n for n in notes)
    assert reconnected, (notes, len(seqs), stats.games)
    assert views and not views[0].HasField("my_seat"), "a spectator's view after the reconnect"


async def test_an_unreachable_server_is_named_while_the_client_tries_again() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    conn = Connection(address, "device-nowhere-1", "Nel")
    conn.give_up_after = 1.0
    notes: list[str] = []
    conn.notify = notes.append
    with pytest.raises(Refusal) as refused:
        await conn.login()
    await conn.close()
    assert refused.value.code == grpc.StatusCode.UNAVAILABLE
    assert notes[0] == f"Cannot reach {address}: trying again…"


async def test_a_watch_goes_on_when_its_token_expires(fresh_dsn: str) -> None:
    async with (
        servers(fresh_dsn) as running,
        grpc.aio.insecure_channel(running.game_address) as channel,
    ):
        players = [await login(channel, f"P{i}") for i in range(2)]
        table_id = await create_table(channel, players, turn_timer_ms=3_600_000)
        spectator = Connection(running.address, "device-spectator-2", "Eve")
        await spectator.login()
        spectator.use_game(running.game_address)
        short = issue_token(spectator.player_id, secret=SECRET, ttl_s=2, now=time.time())
        spectator.token = short  # expires in 1 to 2 s
        following = Follower(spectator, table_id)
        await play_turns(players, table_id, 1)
        await asyncio.sleep(2.2)  # the stream's token has expired
        view = await play_turns(players, table_id, 2)
        await following.until(view.last_seq)
        await following.stop()
        await spectator.close()

    assert spectator.token != short, "signed in again"
    assert following.seqs == list(range(1, view.last_seq + 1)), "no gap and no duplicate"


async def test_a_watch_on_a_connection_the_network_lost_reconnects(fresh_dsn: str) -> None:
    # The server takes pings often and never pings itself within the test: only the
    # client's keepalive can find the connection dead.
    server = await start_server(fresh_dsn, client_ping_ms=100)
    proxy = Proxy(f"127.0.0.1:{server.port}")
    through = await proxy.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as direct:
            players = [await login(direct, f"P{i}") for i in range(2)]
            table_id = await create_table(direct, players, turn_timer_ms=3_600_000)
            spectator = Connection(
                through,
                "device-spectator-3",
                "Eve",
                channels={through: open_channel(through, keepalive_ms=KEEPALIVE_MS)},
            )
            following, notes = await followed(spectator, table_id)
            view = await players[0].view(table_id)
            await following.until(view.last_seq)
            await asyncio.sleep(4 * KEEPALIVE_MS / 1000)  # pings answered: nothing lost
            assert not notes

            proxy.hold()  # from now on the connection passes nothing to the client
            async with asyncio.timeout(30):
                while not notes:
                    await asyncio.sleep(0.02)
            assert notes[0] == "Connection to the table lost: reconnecting…"
            proxy.release()
            view = await play_turns(players, table_id, 1)
            await following.until(view.last_seq)
            await following.stop()
            await spectator.close()
    finally:
        await proxy.close()
        await server.stop(0)

    assert following.seqs == list(range(1, view.last_seq + 1)), "no gap and no duplicate"


async def test_a_watch_turned_away_by_a_full_server_comes_back_when_told(
    fresh_dsn: str,
) -> None:
    full = Limits(player_rate=0, peer_rate=0, streams_per_player=0, streams_per_replica=1)
    server = await start_server(fresh_dsn, limits=full)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as direct:
            players = [await login(direct, f"P{i}") for i in range(2)]
            table_id = await create_table(direct, players, turn_timer_ms=3_600_000)
            taken = players[0].watch(table_id)  # the server's one stream
            assert await taken.next() is not None
            spectator = Connection(f"127.0.0.1:{server.port}", "device-spectator-4", "Eve")
            limited: list[None] = []
            spectator.on_rate_limited = lambda: limited.append(None)
            following, notes = await followed(spectator, table_id)
            async with asyncio.timeout(30):
                while not limited:
                    await asyncio.sleep(0.02)
            taken.cancel()  # a place is free by the time the spectator comes back
            view = await players[0].view(table_id)
            await following.until(view.last_seq)
            await following.stop()
            await spectator.close()
    finally:
        await server.stop(0)
    # Every event once, in order, up to the view's at least (the first watcher's
    # presence may be told after the view was read).
    assert following.seqs == list(range(1, len(following.seqs) + 1))
    assert following.seqs[-1] >= view.last_seq
    assert notes[0] == "The game is very busy right now: trying again in a few seconds…"


async def test_a_watch_that_keeps_failing_while_the_table_answers_is_given_up(
    fresh_dsn: str,
) -> None:
    # A replica that cannot decode the table's events (during a rolling upgrade, say)
    # answers every Watch with INTERNAL, while GetTable works.
    server = await start_server(fresh_dsn)
    try:
        async with (
            grpc.aio.insecure_channel(address(server)) as direct,
            front(address(server), UNDECODABLE) as (through, asked),
        ):
            players = [await login(direct, f"P{i}") for i in range(2)]
            table_id = await create_table(direct, players, turn_timer_ms=3_600_000)
            spectator = Connection(through, "device-spectator-5", "Eve", give_up_after=GIVE_UP_S)
            following, notes = await followed(spectator, table_id)
            error = await ended(following.task, asked, WATCH, MOST_WATCHES)
            await spectator.close()
    finally:
        await server.stop(0)

    assert asked[WATCH] <= MOST_WATCHES, f"still trying after {asked[WATCH]} attempts"
    assert isinstance(error, Refusal), error
    assert error.code == grpc.StatusCode.INTERNAL
    assert f"The game service at {through} answers, but its stream" in str(error), str(error)
    assert asked[WATCH] >= 2, "tried again before giving up"
    assert notes == ["Connection to the table lost: reconnecting…"], "said once, and no more"
    assert len(following.views) == 1, "the same snapshot is shown once"
    assert not following.seqs


async def test_a_token_refused_even_fresh_is_given_up_with_the_reason(fresh_dsn: str) -> None:
    # The game service checks tokens with another key than the server that signs
    # players in: every token it is given, fresh or not, is TOKEN_INVALID.
    signer = await start_server(fresh_dsn)
    other = GameServer(GameConfig(dsn=fresh_dsn, secret=f"another-{SECRET}", limits=UNLIMITED))
    await other.start()
    try:
        async with (
            grpc.aio.insecure_channel(address(signer)) as direct,
            front(address(other)) as (through, asked),
        ):
            players = [await login(direct, f"P{i}") for i in range(2)]
            table_id = await create_table(direct, players, turn_timer_ms=3_600_000)
            spectator = Connection(
                address(signer), "device-spectator-6", "Eve", game=through, give_up_after=GIVE_UP_S
            )
            following, notes = await followed(spectator, table_id)
            error = await ended(following.task, asked, WATCH, MOST_WATCHES)
            await spectator.close()
    finally:
        await other.stop(0)
        await signer.stop(0)

    assert asked[WATCH] <= MOST_WATCHES, f"still trying after {asked[WATCH]} attempts"
    assert isinstance(error, Refusal), error
    assert (error.code, error.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    assert "keeps refusing the sign-in" in str(error) and "signing key" in str(error), str(error)
    assert asked[WATCH] >= 3, "signed in again after each refusal"
    assert notes == ["The game service refused the sign-in: trying again…"]
    assert not following.seqs and not following.views
