"""`kill -9` of a matchmaker replica in the middle of matching: its matches are
recorded, their tables being asked for, and the replica dies holding them. Another
replica completes every match once: each player seated once, at the table the
dead replica planned, and no table made twice."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker import matcher as matcher_module
from tests.game.harness import SECRET
from tests.matchmaker.harness import Backend, backend, enqueue, get_ticket, on, players

from .processes import MATCHMAKER_LAUNCH, REPO, START_TIMEOUT_S, free_port, server_env, until

SIZES = (2, 3, 4, 2)
"""Four tables: eleven players."""


@contextlib.contextmanager
def black_hole() -> Iterator[str]:
    """An address that takes connections and never answers: a call to it hangs
    (until its deadline) as one to a game service stuck mid-call would."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


def start_matchmaker(
    dsn: str, game_target: str, address: str, log: Path
) -> subprocess.Popen[bytes]:
    env = server_env(
        dsn,
        SECRET,
        RUMMY_MATCHMAKER_LISTEN=address,
        RUMMY_MATCHMAKER_METRICS_PORT="0",
        RUMMY_GAME_TARGET=game_target,
    )
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-c", MATCHMAKER_LAUNCH],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


async def serving(channel: grpc.aio.Channel, process: subprocess.Popen[bytes], log: Path) -> None:
    async def up() -> bool:
        assert process.poll() is None, log.read_text()
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=1.0
            )
        except grpc.aio.AioRpcError:
            return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    await until(up, "the matchmaker to serve", START_TIMEOUT_S, every=0.1)


async def test_kill_9_of_a_matchmaker_mid_match_leaves_no_half_made_match(
    fresh_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(matcher_module, "RECOVER_AFTER_S", 0.5)
    con = await asyncpg.connect(fresh_dsn)
    try:
        async with backend(fresh_dsn, replicas=0) as b:
            await doomed_replica_then_takeover(b, con, tmp_path)
    finally:
        await con.close()


async def doomed_replica_then_takeover(b: Backend, con: asyncpg.Connection, logs: Path) -> None:
    address = f"127.0.0.1:{free_port()}"
    with black_hole() as stuck_game:
        doomed = start_matchmaker(b.dsn, stuck_game, address, logs / "matchmaker.log")
        try:
            async with (
                grpc.aio.insecure_channel(b.game_target) as game,
                grpc.aio.insecure_channel(address) as channel,
            ):
                await serving(channel, doomed, logs / "matchmaker.log")
                # Players sign in on the game service (one secret for both services).
                people = await players(game, sum(SIZES))
                waiters = []
                i = 0
                for size in SIZES:
                    for _ in range(size):
                        waiters.append(await enqueue(on(people[i], channel), table_size=size))
                        i += 1

                async def all_held() -> bool:
                    """Every match planned, none created, each locked by the replica
                    while it waits on the game service."""
                    assert doomed.poll() is None, (logs / "matchmaker.log").read_text()
                    async with con.transaction():
                        rows = await con.fetch("SELECT state FROM matches")
                        free = await con.fetch("SELECT 1 FROM matches FOR UPDATE SKIP LOCKED")
                    return (
                        len(rows) == len(SIZES)
                        and {r["state"] for r in rows} == {"creating"}
                        and not free
                    )

                await until(all_held, "every match held, waiting on its table", 30, every=0.05)
                doomed.send_signal(signal.SIGKILL)
                doomed.wait(10)
        finally:
            if doomed.poll() is None:
                doomed.kill()
                doomed.wait(10)
    planned = {
        str(r["id"]): r["table_id"] for r in await con.fetch("SELECT id, table_id FROM tickets")
    }
    assert len(planned) == sum(SIZES) and all(planned.values())
    # A healthy replica takes the dead one's matches over.
    replica = await b.add_replica(matching=True)

    async def all_matched() -> bool:
        states = await con.fetch("SELECT DISTINCT state FROM tickets")
        return [r["state"] for r in states] == ["matched"]

    await until(all_matched, "every ticket matched", 30, every=0.05)
    matches = await con.fetch("SELECT table_id, state FROM matches")
    assert {r["state"] for r in matches} == {"created"}
    tables = await con.fetch("SELECT id FROM tables")
    assert {r["id"] for r in tables} == {r["table_id"] for r in matches}
    seats = await con.fetch("SELECT table_id, player_id FROM table_seats")
    assert max(Counter(s["player_id"] for s in seats).values()) == 1, "a player at two tables"
    assert len(seats) == sum(SIZES)
    # Each player learns their table from the replica that took over: the one
    # the dead replica planned.
    for person, waiter in zip(people, waiters, strict=True):
        ticket = await get_ticket(on(person, b.channel(replica)), waiter.ticket_id)
        assert ticket.state == mm.TICKET_STATE_MATCHED
        assert ticket.match.table_id == str(planned[waiter.ticket_id])
