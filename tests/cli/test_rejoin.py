"""Going back to a table: a remembered game address that no longer answers, a
seat the config folder knows nothing of, and a client stopped while queued."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from clients.cli import matchmaking, waiting
from clients.cli.connection import Connection
from clients.cli.identity import Identity, LastMatch
from clients.cli.matchmaking import QueueChoice
from services.common.pb.rummy.v1.table_pb2 import TableView
from services.common.wire.refusals import Refusal

from .harness import Servers, Terminal, connected, seat_with_a_bot, servers


def closed_address() -> str:
    """An address where nothing listens (a port just given back by the kernel)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"127.0.0.1:{port}"


@pytest.fixture(autouse=True)
def quick_guesses(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guessed address that does not answer is given up on at once."""
    monkeypatch.setattr(matchmaking, "LOOK_GIVE_UP_S", 0.5)


def default_game_at(monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    """Make the default game address beside the test's matchmaker be ``address``."""
    monkeypatch.setattr(matchmaking, "DEFAULT_GAME_PORT", int(address.rpartition(":")[2]))


async def _queued_back(running: Servers, identity: Identity) -> tuple[TableView, list[str]]:
    """Queue as `rummy play` does, and open the table the matchmaker names: the
    table reached, and what the player was told on the way."""
    conn = await connected(running.address, identity, "Sam")
    said: list[str] = []
    try:
        match = await waiting.queue(conn, identity, QueueChoice(), said.append)
        return await matchmaking.open_table(conn, identity, match, said.append), said
    finally:
        await conn.close()


async def test_a_stale_game_address_gives_way_to_the_default_one(
    fresh_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with servers(fresh_dsn) as running:
        table_id = await seat_with_a_bot(running, tmp_path)
        default_game_at(monkeypatch, running.game_address)
        identity = Identity(tmp_path)
        identity.remember_match(LastMatch(running.address, table_id, 0, closed_address(), ""))
        conn = await connected(running.address, identity, "Sam")
        said: list[str] = []
        try:
            found = await matchmaking.resume(conn, identity, said.append)
        finally:
            await conn.close()
    assert found is not None and found[1].table_id == table_id
    assert said == [
        f"Looking for your table at the game service {running.game_address}…",
        f"Rejoining your table {table_id} (seat 1).",
    ]
    remembered = identity.last_match(running.address)
    assert remembered is not None and remembered.game_target == running.game_address


async def test_a_seat_the_config_knows_nothing_of_is_found_where_the_matchmaker_says(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        table_id = await seat_with_a_bot(running, tmp_path)
        view, said = await _queued_back(running, Identity(tmp_path))
    assert view.table_id == table_id
    assert said == [f"You are already seated at table {table_id}: going back to it."]


async def test_a_seat_at_an_address_unknown_here_is_found_at_the_default_one(
    fresh_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The matchmaker names an address that answers only inside the cluster.
    async with servers(fresh_dsn, public_game_target=closed_address()) as running:
        table_id = await seat_with_a_bot(running, tmp_path)
        default_game_at(monkeypatch, running.game_address)
        view, said = await _queued_back(running, Identity(tmp_path))
    assert view.table_id == table_id
    assert said == [
        f"You are already seated at table {table_id}: going back to it.",
        f"Looking for your table at the game service {running.game_address}…",
    ]


async def test_a_table_nobody_serves_is_forgotten_and_ends_with_the_way_forward(
    fresh_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a stale address was retried for a minute on every run, and a seat with
    no known address was looked for at the matchmaker ("Method not found!")."""
    stale, nowhere = closed_address(), closed_address()
    async with servers(fresh_dsn, public_game_target=stale) as running:
        table_id = await seat_with_a_bot(running, tmp_path)
        default_game_at(monkeypatch, nowhere)
        identity = Identity(tmp_path)
        identity.remember_match(LastMatch(running.address, table_id, 0, stale, ""))
        conn = await connected(running.address, identity, "Sam")
        said: list[str] = []
        try:
            assert await matchmaking.resume(conn, identity, said.append) is None
            assert identity.last_match(running.address) is None, "the table is forgotten"
            assert said[-1].startswith(f"Could not rejoin your last table {table_id}: ")
            assert f"no game service answers at {stale}" in said[-1]
            # Still seated: the matchmaker sends the player back; nowhere serves the table.
            match = await waiting.queue(conn, identity, QueueChoice(), said.append)
            assert match.table_id == table_id
            with pytest.raises(Refusal) as refused:
                await matchmaking.open_table(conn, identity, match, said.append)
        finally:
            await conn.close()
    message = str(refused.value)
    assert f"You are seated at table {table_id}, but " in message
    assert f"no game service answers at {nowhere}" in message
    assert "Pass the game service's address with --game HOST:PORT." in message


async def test_stopping_while_queued_says_there_is_no_seat_to_keep(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        term = Terminal(
            *("play", "--server", running.address, "--players", "4"),
            *("--config-dir", str(tmp_path)),
        )
        try:
            await term.expect("Looking for a 4-player cafe table")
            await term.send_raw("\x03")  # Ctrl-C
            await term.expect("Stopped before a table was found")
            assert await term.finish() == 130
        finally:
            term.kill()
    assert "seat is kept" not in term.log.getvalue()


async def test_queueing_again_while_the_last_ticket_is_being_seated_joins_its_table(
    fresh_dsn: str, tmp_path: Path
) -> None:
    async with servers(fresh_dsn) as running:
        await running.game.stop(0)  # the match is made, its table cannot be yet
        ann, bob = Identity(tmp_path / "ann"), Identity(tmp_path / "bob")
        said: list[str] = []
        again: list[str] = []
        conns: list[Connection] = []
        tasks: list[asyncio.Task[Any]] = []

        async def signed_in(identity: Identity) -> Connection:
            conn = await connected(running.address, identity, "Sam")
            conns.append(conn)
            return conn

        try:
            first = asyncio.create_task(
                waiting.queue(await signed_in(ann), ann, QueueChoice(), said.append)
            )
            tasks.append(first)
            second = asyncio.create_task(
                waiting.queue(await signed_in(bob), bob, QueueChoice(), said.append)
            )
            tasks.append(second)
            con = await asyncpg.connect(fresh_dsn)
            try:
                async with asyncio.timeout(30):
                    while (
                        await con.fetchval("SELECT count(*) FROM tickets WHERE state = 'matching'")
                        < 2
                    ):
                        await asyncio.sleep(0.05)
            finally:
                await con.close()
            first.cancel()  # Ann's client stops; her ticket is being seated meanwhile
            with contextlib.suppress(asyncio.CancelledError):
                await first

            conn = await signed_in(ann)
            queued = asyncio.create_task(waiting.queue(conn, ann, QueueChoice(), again.append))
            tasks.append(queued)
            async with asyncio.timeout(30):
                while not again:
                    await asyncio.sleep(0.05)
            assert again[0] == "Your last ticket is being seated: joining that table…"
            await running.restart_game()  # the table is made: both are seated at it
            async with asyncio.timeout(60):
                match, bobs = await queued, await second
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for conn in conns:
                await conn.close()
    assert match.table_id and match.table_id == bobs.table_id
    assert any("already seated" in line for line in again), again
