"""PostgreSQL stops and starts again while tables are being played: meanwhile the
replicas answer UNAVAILABLE (DATABASE_UNAVAILABLE) and report NOT_SERVING; they
recover by themselves, the games finish, and no table is left half-written. The
outage outlasts a stop of the turns' clock: the turn of a table nobody played
meanwhile gets its time back (TurnResumed) instead of timing out."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import grpc
import pytest

from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, game_pb2, game_pb2_grpc, table_pb2
from services.game import eventlog
from services.game.clockstop import BEAT_S, CLOCK_STOP_S
from services.game.rules import events as ev
from services.game.rules.ruleset import CAFE

from .players import ResumingWatcher, Seat, create_table, login, play_game, readers
from .processes import (
    CALL_TIMEOUT_S,
    NOT_SERVING,
    REPO,
    SERVING,
    GameProcess,
    channels,
    free_port,
    game_processes,
    status_of,
    until,
)
from .stored import assert_acks_logged_once, assert_stream_is_log, assert_whole

TABLES = 4
STOP_AFTER_ACKS = 40
READERS = 16
DOWN = (grpc.StatusCode.UNAVAILABLE, "DATABASE_UNAVAILABLE")


_POSTGRES = """
import sys
from services.common.db import EmbeddedPostgres
server = EmbeddedPostgres(sys.argv[1], port=int(sys.argv[2]), durable=False)
dsn = server.start()
print(dsn, server.data_dir, flush=True)
sys.stdin.read()  # until the test says stop, or goes away
server.stop()
"""


class Postgres:
    """A PostgreSQL of the test's own, on a fixed port so that it comes back there.

    Started and stopped by a small helper process: forking this process (where
    gRPC runs threads) to launch the server as another user can crash the child."""

    def __init__(self, parent: Path) -> None:
        self.parent = parent
        self.port = free_port()
        self.dsn = ""
        self.data_dir: Path | None = None
        self._helper: subprocess.Popen[str] | None = None

    async def start(self) -> None:
        assert self._helper is None
        self._helper = helper = subprocess.Popen(
            [sys.executable, "-c", _POSTGRES, str(self.parent / "pg"), str(self.port)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert helper.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(helper.stdout.readline), 90)
        assert line, f"PostgreSQL did not start (helper exited with {helper.poll()})"
        dsn, data_dir = line.split()
        assert not self.dsn or dsn == self.dsn, "it came back elsewhere"
        self.dsn, self.data_dir = dsn, Path(data_dir)

    async def stop(self) -> None:
        """A real stop: PostgreSQL's fast shutdown (clients are disconnected)."""
        helper, self._helper = self._helper, None
        if helper is None:
            return
        assert helper.stdin is not None
        helper.stdin.close()
        try:
            await asyncio.to_thread(helper.wait, 60)
        except subprocess.TimeoutExpired:
            helper.kill()
            raise


@pytest.fixture
async def postgres() -> AsyncIterator[Postgres]:
    parent = Path(tempfile.mkdtemp(prefix="rummy-faults-pg-"))
    parent.chmod(0o711)  # a dedicated server user (when root) must pass through
    server = Postgres(parent)
    try:
        await server.start()
        yield server
    finally:
        await server.stop()
        data_dir = server.data_dir
        if data_dir is not None:
            # Should the helper have been killed, its server must not outlive the test.
            with contextlib.suppress(OSError, ValueError, IndexError):
                pid = int((data_dir / "postmaster.pid").read_text().split()[0])
                if Path(f"/proc/{pid}/comm").read_text().strip() == "postgres":
                    os.kill(pid, signal.SIGQUIT)
        shutil.rmtree(parent, ignore_errors=True)
        if data_dir is not None and not data_dir.is_relative_to(parent):
            shutil.rmtree(data_dir, ignore_errors=True)
            (data_dir.parent / f".{data_dir.name}.lock").unlink(missing_ok=True)


VERSION = "SELECT version FROM tables WHERE id = $1"


async def resumed(dsn: str, table_id: uuid.UUID) -> None:
    """Until the sweepers gave the table's turn its time back (a version more)."""
    con = await asyncpg.connect(dsn)
    try:
        while await con.fetchval(VERSION, table_id) == 1:
            await asyncio.sleep(0.1)
    finally:
        await con.close()


def deck(seed: int) -> list[int]:
    order = list(CAFE.deck.ids())
    random.Random(seed).shuffle(order)
    return order


async def while_down(replica: GameProcess, channel: grpc.aio.Channel, probe: Seat) -> None:
    """What a replica answers while the database is down."""
    stub = game_pb2_grpc.GameServiceStub(channel)
    metadata = probe.account.metadata
    request_id = f"while-down-{replica.port}"
    calls = {
        "GetTable": stub.GetTable(
            game_pb2.GetTableRequest(table_id=probe.table_id),
            metadata=metadata,
            timeout=CALL_TIMEOUT_S,
        ),
        "DrawStock": stub.DrawStock(
            game_pb2.DrawStockRequest(table_id=probe.table_id, request_id=request_id),
            metadata=metadata,
            timeout=CALL_TIMEOUT_S,
        ),
        "Login": auth_pb2_grpc.AuthServiceStub(channel).Login(
            auth_pb2.LoginRequest(device_id=f"device-{uuid.uuid4().hex}", display_name="Late"),
            timeout=CALL_TIMEOUT_S,
        ),
    }
    for name, call in calls.items():
        with pytest.raises(grpc.aio.AioRpcError) as failure:
            await call
        assert status_of(failure.value) == DOWN, (name, failure.value)
    watch = stub.Watch(game_pb2.WatchRequest(table_id=probe.table_id), metadata=metadata)
    with pytest.raises(grpc.aio.AioRpcError) as failure:
        await watch.read()
    assert status_of(failure.value) == DOWN, ("Watch", failure.value)


async def test_a_postgres_restart_mid_game_is_survived_and_leaves_no_half_written_table(
    postgres: Postgres, tmp_path: Path
) -> None:
    dsn = postgres.dsn
    async with game_processes(dsn, 2, tmp_path) as replicas, channels() as channel:
        addresses = [r.address for r in replicas]
        seats: list[list[Seat]] = []
        watchers: list[ResumingWatcher] = []
        for t in range(TABLES):
            # Tables are spread over the replicas; a failed call tries the other one.
            targets = addresses[t % 2 :] + addresses[: t % 2]
            players = [await login(channel(targets[0]), f"T{t}P{i}") for i in range(2)]
            table_id = await create_table(channel(targets[0]), players, deck_order=deck(t))
            seats.append([Seat(p, i, table_id, targets, channel) for i, p in enumerate(players)])
            watchers.append(ResumingWatcher(players[1], table_id, targets[::-1], channel))
        everyone = [s for table in seats for s in table]
        # A table nobody plays: the calls refused while the database is down go there.
        idle = [await login(channel(addresses[0]), f"Idle{i}") for i in range(2)]
        idle_table = await create_table(channel(addresses[0]), idle)
        probe = Seat(idle[0], 0, idle_table, addresses, channel)

        watching = [asyncio.create_task(w.run(timeout=80)) for w in watchers]
        games = [asyncio.create_task(play_game(table)) for table in seats]
        enough = asyncio.Event()
        reading = asyncio.create_task(
            readers([r.address for r in replicas], channel, probe, enough, READERS)
        )
        try:
            async with asyncio.timeout(75):
                await until(
                    lambda: sum(len(s.acks) for s in everyone) >= STOP_AFTER_ACKS,
                    "the games to be under way",
                )
                acked_before = sum(len(s.acks) for s in everyone)
                down_at = time.monotonic()
                await postgres.stop()
                await asyncio.gather(*(r.wait_health(NOT_SERVING, timeout=20) for r in replicas))
                enough.set()
                read_failures = await reading
                for replica in replicas:
                    await while_down(replica, channel(replica.address), probe)
                # The players kept trying, and no game gave up. (A lucky deal may
                # have ended a game just before the stop: its players call no more.)
                await until(
                    lambda: all(
                        any(s.failures for s in table) or game.done()
                        for table, game in zip(seats, games, strict=True)
                    ),
                    "the players to be refused",
                )
                assert any(any(s.failures for s in table) for table in seats)
                for game in games:
                    if game.done():
                        view = await game  # raises what stopped it
                        assert view.phase == table_pb2.PHASE_GAME_OVER
                # Down for longer than a stop of the clock, counted from the last
                # beat before the stop.
                await asyncio.sleep(CLOCK_STOP_S + BEAT_S + 0.5 - (time.monotonic() - down_at))
                await postgres.start()
                await asyncio.gather(*(r.wait_health(SERVING, timeout=30) for r in replicas))
                await asyncio.gather(*games)
                streams = await asyncio.gather(*watching)
                await resumed(dsn, uuid.UUID(idle_table))
        finally:
            enough.set()
            for task in (*games, *watching, reading):
                task.cancel()

    assert sum(len(s.acks) for s in everyone) > acked_before
    failures = [f for s in everyone for f in s.failures] + read_failures
    assert {(f.code, f.reason) for f in failures} == {DOWN}, [
        f for f in failures if (f.code, f.reason) != DOWN
    ]
    for w in watchers:
        for code, reason, _ in w.ends:
            assert code == grpc.StatusCode.UNAVAILABLE, w.ends
            assert reason in ("DATABASE_UNAVAILABLE", "RESUME_REQUIRED"), w.ends

    con = await asyncpg.connect(dsn)
    try:
        for table, events in zip(seats, streams, strict=True):
            acks = [a for s in table for a in s.acks]
            log = await assert_acks_logged_once(con, table[0].table_id, acks)
            assert_stream_is_log(events, log)
        # The draw refused while the database was down changed nothing; the clock's
        # stop gave the turn its time back once, and nothing else happened there.
        idle_id = uuid.UUID(idle_table)
        assert await con.fetchval(VERSION, idle_id) == 2
        assert not await con.fetch("SELECT 1 FROM action_requests WHERE table_id = $1", idle_id)
        rows = await con.fetch(
            "SELECT kind, payload FROM table_events WHERE table_id = $1 ORDER BY seq", idle_id
        )
        idle_log = [eventlog.decode(r["kind"], r["payload"]) for r in rows]
        assert [type(e) for e in idle_log] == [ev.RoundDealt, ev.TurnBegan, ev.TurnResumed]
        for row in await con.fetch("SELECT id FROM tables"):
            await assert_whole(con, str(row["id"]))
    finally:
        await con.close()
