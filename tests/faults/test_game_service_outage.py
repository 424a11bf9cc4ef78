"""The game service goes away and comes back on the same address while players
queue: the matchmaker notices it is back soon, and the tickets queued in the
outage are matched after it, never given up.

The game server is stopped and its port kept: a listener there takes each
connection attempt of the matchmaker's channel and closes it at once, which
counts the attempts and shows the pauses between them. The game server starts
again on the same port right after an attempt, the worst moment: the channel's
next attempt is a whole pause away.

Two outages: 30 s, for real; and one longer than the time a match waits for its
table (`give_up_s`), with the matchmaker's times scaled down (see
`test_an_outage_longer_than_the_give_up_time_leaves_no_ticket_unmatched`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.matchmaker.game_channel import Reconnect
from services.matchmaker.matcher import GIVE_UP_S
from tests.game.harness import Player, start_server
from tests.matchmaker.harness import Backend, Waiter, backend, enqueue, players

GRPC_JITTER = 0.2
"""gRPC draws each pause between two attempts within 20 % of its nominal length."""
SCALE = 1 / 12
"""The longer outage's times, against the real ones: a give-up time of 10 s."""


@dataclass
class Figures:
    """What one outage measured, in seconds."""

    outage_s: float
    attempts: int
    longest_gap_s: float
    """The longest pause between two connection attempts of the matchmaker."""
    delay_s: float
    """From the game server serving again to the end of the waits of the tickets
    queued in the outage."""
    ended: list[str]
    """How those waits ended: the table, or why not."""

    @property
    def matched(self) -> bool:
        return len(set(self.ended)) == 1 and self.ended[0].startswith("matched")

    def __str__(self) -> str:
        return (
            f"outage {self.outage_s:.1f} s: {self.attempts} connection attempts,"
            f" longest pause {self.longest_gap_s:.2f} s; waits ended"
            f" {self.delay_s:.2f} s after the game service was back: {self.ended}"
        )


@contextlib.asynccontextmanager
async def port_kept(port: int) -> AsyncIterator[list[float]]:
    """A listener on the stopped game server's port: every connection is noted
    (the loop's time) and closed at once, as a refused one would be."""
    loop = asyncio.get_running_loop()
    attempts: list[float] = []

    def refuse(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        attempts.append(loop.time())
        writer.transport.abort()

    listener = await asyncio.start_server(refuse, "127.0.0.1", port, reuse_address=True)
    try:
        yield attempts
    finally:
        listener.close()
        await listener.wait_closed()


@contextlib.contextmanager
def channel_options(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, dict[str, Any]]]:
    """The options of each channel opened meanwhile, by target."""
    opened: dict[str, dict[str, Any]] = {}
    real = grpc.aio.insecure_channel

    def noted(target: str, options: Any = None, *args: Any, **kwargs: Any) -> Any:
        opened[target] = dict(options or ())
        return real(target, options, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(grpc.aio, "insecure_channel", noted)
        yield opened


async def wait_until(check: Callable[[], bool], timeout: float) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


async def ended(waiters: list[Waiter], timeout: float) -> list[str]:
    """How each stream ended: the table it was matched to, or why not."""
    await asyncio.gather(*(w.end(timeout) for w in waiters))
    return [
        f"matched at {w.match.table_id}"
        if w.match
        else f"{mm.TicketState.Name(w.final.state)}: {w.final.end_message}"
        for w in waiters
    ]


async def game_outage(
    b: Backend, people: list[Player], *, outage_s: float, queue_at_s: float, give_up_s: float
) -> Figures:
    """Stop the game server for at least ``outage_s``, two players queueing
    ``queue_at_s`` into it, then start it again on its port right after a
    connection attempt. What became of their tickets."""
    loop = asyncio.get_running_loop()
    port = b.game.port
    # First a match, so that the channel is connected when the outage begins.
    before = await ended([await enqueue(p, table_size=2) for p in people[:2]], give_up_s)
    assert all(e.startswith("matched") for e in before), before
    await b.game.stop(0)
    down_at = loop.time()
    async with port_kept(port) as attempts:
        await asyncio.sleep(queue_at_s)
        waiters = [await enqueue(p, table_size=2) for p in people[2:]]
        await asyncio.sleep(max(0.0, down_at + outage_s - loop.time()))
        seen = len(attempts)
        await wait_until(lambda: len(attempts) > seen, timeout=60)
    restarted = await start_server(b.dsn, address=f"127.0.0.1:{port}")
    back_at = loop.time()
    try:
        outcomes = await ended(waiters, timeout=give_up_s + 30)
    finally:
        await restarted.stop(0)
    gaps = [later - earlier for earlier, later in itertools.pairwise(attempts)]
    return Figures(
        outage_s=back_at - down_at,
        attempts=len(attempts),
        longest_gap_s=max(gaps, default=0.0),
        delay_s=loop.time() - back_at,
        ended=outcomes,
    )


@pytest.mark.long
@pytest.mark.timeout(120)
async def test_a_30_s_outage_of_the_game_service(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with channel_options(monkeypatch) as opened:
        async with backend(fresh_dsn, replicas=0) as b:
            replica = await b.add_replica(matching=True)
            people = await players(b.channel(replica), 4)
            figures = await game_outage(b, people, outage_s=30, queue_at_s=15, give_up_s=GIVE_UP_S)
    print(f"30 s outage, give-up {GIVE_UP_S:.0f} s: {figures}")
    assert figures.matched, figures
    # The pauses between attempts stop growing far short of the give-up time: a
    # ticket queued just before the game service comes back has most of its
    # wait left when the channel connects again.
    options = opened[b.game_target]
    cap_s = options.get("grpc.max_reconnect_backoff_ms", GIVE_UP_S * 1000) / 1000
    assert cap_s * (1 + GRPC_JITTER) < GIVE_UP_S / 10, options
    assert figures.longest_gap_s < GIVE_UP_S


@pytest.mark.timeout(120)
async def test_an_outage_longer_than_the_give_up_time_leaves_no_ticket_unmatched(
    fresh_dsn: str,
) -> None:
    """A 3-minute outage against the 2-minute give-up time, with the give-up
    time and the reconnect pauses scaled by SCALE (10 s, 1/6 s): the outage lasts
    twice the give-up time (the 3-minute one, 1.5 times). The tickets are queued
    2 s before the game service is back.

    Where the pauses between attempts grow by 1.6 from 1 s up to 120 s, the
    give-up time (gRPC's own backoff, unscaled), the 5th attempt comes within
    19 s of the loss and the 6th after 21 s: the game service comes back right
    after the 6th, and the pause after it is 13.4 s or more (16.8 s, give or
    take 20 %), longer than the scaled give-up time. The tickets are given up
    before the channel connects again (0.1 s after the game service is back)."""
    give_up_s = GIVE_UP_S * SCALE
    default = Reconnect()
    scaled = Reconnect(
        first_s=default.first_s * SCALE,
        max_s=default.max_s * SCALE,
        attempt_s=default.attempt_s * SCALE,
    )
    async with backend(fresh_dsn, replicas=0) as b:
        replica = await b.add_replica(matching=True, give_up_s=give_up_s, reconnect=scaled)
        people = await players(b.channel(replica), 4)
        outage_s = 2 * give_up_s
        figures = await game_outage(
            b, people, outage_s=outage_s, queue_at_s=outage_s - 2, give_up_s=give_up_s
        )
    print(
        f"scaled outage, give-up {give_up_s:.0f} s, reconnect cap {scaled.max_s:.2f} s: {figures}"
    )
    assert figures.matched, figures
    assert figures.longest_gap_s < give_up_s


@pytest.mark.long
@pytest.mark.timeout(300)
async def test_a_3_minute_outage_of_the_game_service(
    fresh_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 3-minute outage itself, at the real give-up time and reconnect pauses:
    tickets queued just before the game service is back are seated (the scaled
    test above shows what gRPC's own backoff did to them)."""
    with channel_options(monkeypatch) as opened:
        async with backend(fresh_dsn, replicas=0) as b:
            replica = await b.add_replica(matching=True)
            people = await players(b.channel(replica), 4)
            figures = await game_outage(
                b, people, outage_s=180, queue_at_s=178, give_up_s=GIVE_UP_S
            )
    print(f"3-minute outage, give-up {GIVE_UP_S:.0f} s: {figures}")
    assert figures.matched, figures
    assert b.game_target in opened
    assert figures.longest_gap_s < GIVE_UP_S
