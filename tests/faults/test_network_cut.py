"""The network between a client and a replica is cut in the middle of an action:
the client retries the same request id through a fresh connection and the action
applies exactly once, with the answer the server gave the first time."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import grpc
import pytest

from clients.cli.viewstate import state_from_view
from services.common.pb.rummy.v1 import game_pb2_grpc, table_pb2
from services.game.rules.actions import Leave
from services.game.rules.bots import GreedyBot

from .players import Ack, Seat, create_table, login, play_game, request_for
from .processes import CALL_TIMEOUT_S, GameProcess, channels, game_processes, until
from .proxy import Proxy, grpc_messages, stream_carrying
from .stored import assert_acks_logged_once, stored_answer

CUT_EVERY = 3
"""One action in three is cut, alternately after and before it reaches the server."""
CUTS_EACH_WAY = 5
MAX_GAMES = 5


@pytest.fixture
async def replica(fresh_dsn: str, tmp_path: Path) -> AsyncIterator[GameProcess]:
    async with game_processes(fresh_dsn, 1, tmp_path) as (server,):
        yield server


async def test_a_cut_mid_action_then_a_retry_applies_the_action_once(
    replica: GameProcess, fresh_dsn: str
) -> None:
    proxy = Proxy(replica.address)
    con = await asyncpg.connect(fresh_dsn)
    try:
        through = await proxy.start()
        async with channels() as channel:
            players = [await login(channel(replica.address), f"P{i}") for i in range(2)]
            table_id = ""
            seats: list[Seat] = []
            cuts: list[str] = []

            async def version() -> int:
                return int(
                    await con.fetchval(
                        "SELECT version FROM tables WHERE id = $1", uuid.UUID(table_id)
                    )
                )

            async def stored(request_id: str) -> bytes | None:
                return await stored_answer(con, table_id, request_id)

            async def cut_and_retry(seat: Seat, mode: str) -> None:
                """Send the seat's next action through the proxy, have the proxy cut the
                connection ``mode`` it reaches the server, and retry it on a fresh one."""
                view = await seat.view()
                action = GreedyBot().move(state_from_view(view), seat.seat) or Leave()
                request_id = uuid.uuid4().hex
                method, request = request_for(table_id, action, request_id)
                was = await version()
                passed = proxy.arm(request_id.encode(), mode)
                call = getattr(game_pb2_grpc.GameServiceStub(channel(through)), method)(
                    request, metadata=seat.account.metadata, timeout=CALL_TIMEOUT_S
                )
                link = await asyncio.wait_for(passed, 10)
                first: bytes | None = None
                if mode == "after":
                    # The server commits and answers; the answer stays in the proxy.
                    await until(lambda: stored(request_id), "the commit", every=0.002)
                    stream = stream_carrying(bytes(link.up), request_id.encode())
                    assert stream is not None
                    answers = await until(
                        lambda: grpc_messages(bytes(link.down), stream), "the answer", every=0.002
                    )
                    first = answers[0]
                    link.abort()
                with pytest.raises(grpc.aio.AioRpcError) as failure:
                    await call
                assert failure.value.code() == grpc.StatusCode.UNAVAILABLE
                # "before": the server never saw it; "after": it applied it, once.
                assert await version() == was + (mode == "after")
                assert (await stored(request_id) is not None) == (mode == "after")

                # The retry, on a connection of its own as a reconnecting app would, twice.
                async with grpc.aio.insecure_channel(through) as fresh:
                    retry = getattr(game_pb2_grpc.GameServiceStub(fresh), method)
                    reply = await retry(
                        request, metadata=seat.account.metadata, timeout=CALL_TIMEOUT_S
                    )
                    again = await retry(
                        request, metadata=seat.account.metadata, timeout=CALL_TIMEOUT_S
                    )
                answer = reply.SerializeToString()
                assert reply.version == was + 1 and await version() == was + 1
                assert again.SerializeToString() == answer
                assert await stored(request_id) == answer
                if first is not None:
                    assert answer == first, "the retry was answered differently"
                seat.acks.append(
                    Ack(table_id, seat.account.player_id, seat.seat, request_id, action,
                        reply.version, answer, 2)
                )  # fmt: skip
                cuts.append(mode)

            actions = 0

            async def now_and_then() -> None:
                nonlocal actions
                actions += 1
                if actions % CUT_EVERY:
                    return
                view = await seats[0].view()
                if view.phase != table_pb2.PHASE_GAME_OVER:
                    mode = "after" if len(cuts) % 2 == 0 else "before"
                    await cut_and_retry(seats[view.current_seat], mode)

            # A game's length depends on its deal: play games until enough cuts are made.
            for _ in range(MAX_GAMES):
                if len(cuts) >= 2 * CUTS_EACH_WAY:
                    break
                table_id = await create_table(channel(replica.address), players, rounds=2)
                seats = [Seat(p, i, table_id, [through], channel) for i, p in enumerate(players)]
                async with asyncio.timeout(60):
                    await play_game(seats, after_action=now_and_then)
                # Nothing failed but the calls the proxy cut on purpose.
                assert all(not s.failures for s in seats), [s.failures for s in seats]
                await assert_acks_logged_once(con, table_id, [a for s in seats for a in s.acks])

            assert cuts.count("after") >= CUTS_EACH_WAY, cuts
            assert cuts.count("before") >= CUTS_EACH_WAY, cuts
    finally:
        await proxy.close()
        await con.close()
