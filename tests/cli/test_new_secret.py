"""Nothing drops a player for a token: after the whole backend restarts with a
new signing secret (every token the client holds is refused, TOKEN_INVALID), a
client following a table signs in again with its device and goes on with no
gap, and a unary call signs in again and gets its answer, even while the
servers come back one after the other and a fresh sign-in is refused a moment."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc

from clients.cli.connection import Connection
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc
from services.game.server import GameServer
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer
from tests.game.harness import (
    LONG_TURNS_MS,
    SECRET,
    Player,
    create_table,
    play_turns,
    shuffled_deck,
    start_server,
)

from .test_connection import Follower

NEW_SECRET = "another-test-secret-that-is-long-enough-for-hs256"


@dataclass
class Backend:
    """A game server and a matchmaker on one database, restartable on their ports."""

    dsn: str
    game: GameServer
    matchmaker: MatchmakerServer

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.matchmaker.port}"

    @property
    def game_address(self) -> str:
        return f"127.0.0.1:{self.game.port}"

    async def start_game(self, secret: str, port: int = 0) -> None:
        self.game = await start_server(self.dsn, secret=secret, address=f"127.0.0.1:{port}")

    async def start_matchmaker(self, secret: str, port: int = 0) -> None:
        self.matchmaker = await matchmaker(self.dsn, secret, self.game.port, port)

    async def stop(self) -> None:
        await self.matchmaker.stop(0)
        await self.game.stop(0)


async def matchmaker(dsn: str, secret: str, game_port: int, port: int) -> MatchmakerServer:
    server = MatchmakerServer(
        MatchmakerConfig(
            dsn=dsn,
            secret=secret,
            game_target=f"127.0.0.1:{game_port}",
            address=f"127.0.0.1:{port}",
        )
    )
    await server.start()
    return server


@contextlib.asynccontextmanager
async def backend(dsn: str) -> AsyncIterator[Backend]:
    game = await start_server(dsn)
    running = Backend(dsn, game, await matchmaker(dsn, SECRET, game.port, 0))
    try:
        yield running
    finally:
        with contextlib.suppress(Exception):
            await running.stop()


async def device_player(address: str, device: str, name: str) -> Player:
    """The player behind ``device``, signed in at ``address`` (the same player each time)."""
    channel = grpc.aio.insecure_channel(address)
    reply = await auth_pb2_grpc.AuthServiceStub(channel).Login(
        auth_pb2.LoginRequest(device_id=device, display_name=name), timeout=10
    )
    return Player(channel, reply.token, reply.player_id, name)


async def two_players(address: str, devices: str) -> list[Player]:
    return [await device_player(address, f"device-{devices}{i}", f"P{i}") for i in range(2)]


async def test_a_follower_goes_on_after_the_backend_restarts_with_a_new_secret(
    fresh_dsn: str,
) -> None:
    async with backend(fresh_dsn) as running:
        players = [
            await device_player(running.game_address, f"device-p{i}", f"P{i}") for i in range(2)
        ]
        table_id = await create_table(
            players[0].channel, players, deck_order=shuffled_deck(30), turn_timer_ms=LONG_TURNS_MS
        )
        spectator = Connection(running.address, "device-spectator-secret", "Eve")
        await spectator.login()
        spectator.use_game(running.game_address)
        following = Follower(spectator, table_id)
        try:
            view = await play_turns(players, table_id, 1)
            await following.until(view.last_seq)
            old_token = spectator.token

            # The whole backend stops, and comes back on its ports with a new secret.
            game_port, matchmaker_port = running.game.port, running.matchmaker.port
            await running.stop()
            await asyncio.sleep(1.5)  # the client tries meanwhile
            await running.start_game(NEW_SECRET, game_port)
            await running.start_matchmaker(NEW_SECRET, matchmaker_port)

            players = [
                await device_player(running.game_address, f"device-p{i}", f"P{i}") for i in range(2)
            ]
            view = await play_turns(players, table_id, 2)
            await following.until(view.last_seq)
        finally:
            await following.stop()
            await spectator.close()
            for p in players:
                await p.channel.close()

    assert spectator.token != old_token, "signed in again"
    assert following.seqs == list(range(1, view.last_seq + 1)), "no gap and no duplicate"


async def test_a_call_refused_for_its_token_signs_in_again_until_the_servers_agree(
    fresh_dsn: str,
) -> None:
    """The game server is back with the new secret first; the matchmaker, which
    signs the player in, a moment later: a fresh sign-in is refused too until then."""
    async with backend(fresh_dsn) as running:
        players = [
            await device_player(running.game_address, f"device-q{i}", f"Q{i}") for i in range(2)
        ]
        table_id = await create_table(players[0].channel, players, turn_timer_ms=LONG_TURNS_MS)
        conn = Connection(running.address, "device-q0", "P0")
        await conn.login()
        conn.use_game(running.game_address)
        try:
            first = await conn.view(table_id)
            old_token = conn.token
            game_port = running.game.port
            await running.game.stop(0)
            await running.start_game(NEW_SECRET, game_port)

            async def matchmaker_later() -> None:
                await asyncio.sleep(1.0)
                port = running.matchmaker.port
                await running.matchmaker.stop(0)
                await running.start_matchmaker(NEW_SECRET, port)

            later = asyncio.create_task(matchmaker_later())
            view = await conn.view(table_id)  # refused with the old token, then a fresh one
            await later
        finally:
            await conn.close()
            for p in players:
                await p.channel.close()

    assert view.my_seat == 0 and view.table_id == first.table_id
    assert conn.token != old_token
