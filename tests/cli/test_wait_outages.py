"""Waiting for a table through a matchmaker that fails: a wait stream that keeps
failing, or a sign-in the matchmaker keeps refusing even fresh, is given up after
the usual wait with the reason; a stream back after a few failures is told once
lost and once back, and the wait goes on to its table, with one ticket: a guest
whose dropped stream the matchmaker has not seen close yet replaces its own
ticket instead of being taken for another client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import asyncpg
import grpc

from clients.cli import waiting
from clients.cli.identity import Identity, LastMatch
from clients.cli.matchmaking import QueueChoice
from services.common.wire.refusals import Refusal
from services.matchmaker.server import MatchmakerConfig, MatchmakerServer
from tests.game.harness import SECRET

from .front import ENQUEUE, JOIN, LOGIN, Failing, ended, front
from .harness import Servers, connected, servers

GIVE_UP_S = 1.0
"""The client's give-up bound in the tests of a wait that never comes back."""
MOST_WAITS = 8
"""Wait streams a client giving up after `GIVE_UP_S` opens at most: its backoff
waits at least 0.14, 0.28, 0.56 and 1.12 s between its first five."""
QUEUED = "Looking for a 2-player cafe table…"
GET_TICKET = "/rummy.v1.MatchmakerService/GetTicket"


def unreadable(first: int | None = None) -> Failing:
    """A matchmaker whose wait streams fail once they have sent their ticket (a
    replica that cannot read the queues, say)."""
    return Failing(ENQUEUE, grpc.StatusCode.INTERNAL, "Cannot read the queue.", 1, first)


async def _last_ticket(dsn: str, player_id: str) -> str:
    con = await asyncpg.connect(dsn)
    try:
        ticket = await con.fetchval(
            "SELECT id FROM tickets WHERE player_id = $1 ORDER BY created_at DESC LIMIT 1",
            player_id,
        )
    finally:
        await con.close()
    return str(ticket)


async def test_a_wait_stream_that_keeps_failing_while_the_matchmaker_answers_is_given_up(
    fresh_dsn: str, tmp_path: Path
) -> None:
    identity = Identity(tmp_path)
    said: list[str] = []
    async with (
        servers(fresh_dsn) as running,
        front(running.address, unreadable()) as (through, asked),
    ):
        conn = await connected(through, identity, "Sam", give_up_after=GIVE_UP_S)
        try:
            wait = asyncio.create_task(waiting.queue(conn, identity, QueueChoice(), said.append))
            error = await ended(wait, asked, ENQUEUE, MOST_WAITS)
        finally:
            await conn.close()
        last = await _last_ticket(fresh_dsn, conn.player_id)

    assert asked[ENQUEUE] <= MOST_WAITS, f"still trying after {asked[ENQUEUE]} streams"
    assert isinstance(error, Refusal), error
    assert error.code == grpc.StatusCode.INTERNAL
    message = str(error)
    assert f"The matchmaker at {through} answers, but the stream of this wait" in message, message
    assert "stopped waiting for a table" in message, message
    assert asked[ENQUEUE] >= 2, "tried again before giving up"
    assert asked[GET_TICKET] >= 1, "asked what became of the ticket after a drop"
    assert said == [QUEUED, "Lost the matchmaker: reconnecting…"], "each said once"
    remembered = identity.last_match(through)
    assert remembered is not None and remembered.ticket_id == last, "the ticket last followed"


async def test_a_matchmaker_refusing_even_fresh_sign_ins_is_given_up_with_the_reason(
    fresh_dsn: str, tmp_path: Path
) -> None:
    # Behind one address, the replica that signs players in and the one that
    # queues them check tokens with different keys: every token is TOKEN_INVALID.
    said: list[str] = []
    async with servers(fresh_dsn) as running:
        other = MatchmakerServer(
            MatchmakerConfig(
                dsn=fresh_dsn, secret=f"another-{SECRET}", game_target=running.game_address
            )
        )
        await other.start()
        try:
            async with front(f"127.0.0.1:{other.port}", signer=running.address) as (
                through,
                asked,
            ):
                identity = Identity(tmp_path)
                conn = await connected(through, identity, "Sam", give_up_after=GIVE_UP_S)
                try:
                    wait = asyncio.create_task(
                        waiting.queue(conn, identity, QueueChoice(), said.append)
                    )
                    error = await ended(wait, asked, ENQUEUE, MOST_WAITS)
                finally:
                    await conn.close()
        finally:
            await other.stop(0)

    assert asked[ENQUEUE] <= MOST_WAITS, f"still trying after {asked[ENQUEUE]} streams"
    assert isinstance(error, Refusal), error
    assert (error.code, error.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID")
    message = str(error)
    assert f"The matchmaker at {through} keeps refusing the sign-in" in message, message
    assert "signing key" in message, message
    assert asked[ENQUEUE] >= 3, "signed in again after each refusal"
    assert asked[LOGIN] <= asked[ENQUEUE], "one sign-in per refused stream, at most"
    assert said == ["The matchmaker refused the sign-in: trying again…"]


async def _queue_when_told(running: Servers, identity: Identity, said: list[str]) -> LastMatch:
    """A second player, queued once the first was told their wait is back."""
    await _told(said, "Reconnected")
    conn = await connected(running.address, identity, "Bob", give_up_after=GIVE_UP_S)
    try:
        return await waiting.queue(conn, identity, QueueChoice(), lambda _text: None)
    finally:
        await conn.close()


async def test_a_wait_back_after_a_few_failures_is_told_once_lost_and_once_back(
    fresh_dsn: str, tmp_path: Path
) -> None:
    ann, bob = Identity(tmp_path / "ann"), Identity(tmp_path / "bob")
    said: list[str] = []
    async with (
        servers(fresh_dsn) as running,
        front(running.address, unreadable(first=3)) as (through, asked),
    ):
        conn = await connected(through, ann, "Ann", give_up_after=GIVE_UP_S)
        conn.give_up_after = 60.0
        try:
            async with asyncio.timeout(60):
                match, bobs = await asyncio.gather(
                    waiting.queue(conn, ann, QueueChoice(), said.append),
                    _queue_when_told(running, bob, said),
                )
        finally:
            await conn.close()

    assert asked[ENQUEUE] == 4, "three failed streams, and the one that lasted"
    assert said[:3] == [
        QUEUED,
        "Lost the matchmaker: reconnecting…",
        "Reconnected to the matchmaker: waiting again.",
    ], said
    assert not any(line.startswith(("Lost", "Reconnected")) for line in said[3:]), said
    assert match.table_id and match.table_id == bobs.table_id
    remembered = ann.last_match(through)
    assert remembered is not None and remembered.table_id == match.table_id


async def _told(said: list[str], start: str, teller: asyncio.Task[Any] | None = None) -> str:
    """The first line told that starts with ``start``, once told; what ended
    ``teller`` instead, if it ended first."""
    async with asyncio.timeout(30):
        while not any(line.startswith(start) for line in said):
            if teller is not None and teller.done():
                raise AssertionError(f"ended before telling {start!r}: {teller.result()}")
            await asyncio.sleep(0.02)
    return next(line for line in said if line.startswith(start))


async def test_a_guest_back_before_the_matchmaker_saw_the_drop_keeps_one_seat(
    fresh_dsn: str, tmp_path: Path
) -> None:
    # The guest's first stream drops on the way, but the matchmaker has not seen it
    # yet: its ticket is still live when the guest joins again, and is replaced.
    hal, gus, ida = (Identity(tmp_path / name) for name in ("hal", "gus", "ida"))
    hosted: list[str] = []
    said: list[str] = []
    dropped = Failing(JOIN, grpc.StatusCode.UNAVAILABLE, "Connection reset.", 1, 1, held=True)
    async with (
        servers(fresh_dsn) as running,
        front(running.address, dropped) as (through, asked),
    ):
        conns = [
            await connected(running.address, hal, "Hal", give_up_after=GIVE_UP_S),
            await connected(through, gus, "Gus", give_up_after=GIVE_UP_S),
            await connected(running.address, ida, "Ida", give_up_after=GIVE_UP_S),
        ]
        conns[1].give_up_after = 60.0
        try:
            async with asyncio.timeout(60):
                host = asyncio.create_task(
                    waiting.host(conns[0], hal, QueueChoice(players=3), 0, hosted.append)
                )
                code = (await _told(hosted, "Private")).split("Invite code: ")[1].split()[0]
                guest = asyncio.create_task(waiting.join(conns[1], gus, code, said.append))
                await _told(said, "Reconnected", guest)
                third = await waiting.join(conns[2], ida, code, lambda _text: None)
                match, hosts = await guest, await host
        finally:
            for conn in conns:
                await conn.close()

    # The stream that dropped, the one refused for its still live ticket (which is
    # then cancelled), and the one that lasted.
    assert asked[JOIN] == 3, asked[JOIN]
    assert said[:3] == [
        f"Seated at the private 3-player cafe table {code}…",
        "Lost the matchmaker: reconnecting…",
        "Reconnected to the matchmaker: waiting again.",
    ], said
    assert not any(line.startswith(("Lost", "Reconnected", "You are")) for line in said[3:]), said
    assert match.table_id and match.table_id == hosts.table_id == third.table_id
    assert len({match.seat, hosts.seat, third.seat}) == 3, "one seat each"
