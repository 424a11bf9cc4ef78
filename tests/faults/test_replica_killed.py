"""`kill -9` of a game replica in the middle of busy games: the players move to
the other replica, retry their unanswered action with the same request id, and
finish; every acknowledged action is in the log once, and nothing else is."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import asyncpg
import grpc
from google.protobuf.message import Message

from services.game.rules.ruleset import CAFE

from .players import ResumingWatcher, Seat, create_table, login, play_game
from .processes import channels, game_processes, until
from .proxy import Proxy, grpc_messages, stream_carrying
from .stored import assert_acks_logged_once, assert_stream_is_log, stored_answer

TABLES = 4
KILL_AFTER_ACKS = 60
"""Acknowledged actions (over all tables) before replica A dies: well into every game."""


def deck(seed: int) -> list[int]:
    order = list(CAFE.deck.ids())
    random.Random(seed).shuffle(order)
    return order


async def test_kill_9_of_a_replica_mid_game_loses_and_repeats_nothing(
    fresh_dsn: str, tmp_path: Path
) -> None:
    con = await asyncpg.connect(fresh_dsn)
    proxy: Proxy | None = None
    try:
        async with game_processes(fresh_dsn, 2, tmp_path) as (a, b), channels() as channel:
            # Table 0 reaches A through a proxy: its action in flight at the kill is one
            # that A committed and answered, but whose answer never got out.
            proxy = Proxy(a.address)
            via_proxy = await proxy.start()
            seats: list[list[Seat]] = []
            watchers: list[ResumingWatcher] = []
            for t in range(TABLES):
                # Shared by a table's seats: the dead replica is dropped from it.
                targets = [via_proxy if t == 0 else a.address, b.address]
                players = [await login(channel(a.address), f"T{t}P{i}") for i in range(2)]
                table_id = await create_table(
                    channel(a.address), players, deck_order=deck(t), rounds=2
                )
                seats.append(
                    [Seat(p, i, table_id, targets, channel) for i, p in enumerate(players)]
                )
                # One seat per table also watches through A, and resumes on B.
                watchers.append(
                    ResumingWatcher(players[0], table_id, [a.address, b.address], channel)
                )
            everyone = [s for table in seats for s in table]
            lost: dict[str, bytes] = {}
            """Request id -> the answer A sent that its client never received."""

            async def kill_with_an_action_in_flight(address: str, request: Message) -> None:
                seats[0][0].in_flight = seats[0][1].in_flight = None
                assert address == via_proxy
                request_id: str = request.request_id  # type: ignore[attr-defined]
                passed = proxy.arm(request_id.encode(), "after")
                link = await asyncio.wait_for(passed, 10)
                # A commits and answers; the proxy keeps the answer.
                table_id = seats[0][0].table_id
                await until(
                    lambda: stored_answer(con, table_id, request_id),
                    "A to commit the action in flight",
                    every=0.002,
                )
                stream = stream_carrying(bytes(link.up), request_id.encode())
                assert stream is not None
                answers = await until(
                    lambda: grpc_messages(bytes(link.down), stream), "A's answer", every=0.002
                )
                lost[request_id] = answers[0]
                a.kill()
                proxy.cut()
                for table in seats:
                    table[0].targets.remove(table[0].targets[0])

            def arm_the_kill() -> None:
                if sum(len(s.acks) for s in everyone) >= KILL_AFTER_ACKS and not lost:
                    for s in seats[0]:
                        s.in_flight = kill_with_an_action_in_flight

            watching = [asyncio.create_task(w.run()) for w in watchers]
            await until(lambda: all(w.caught_up.is_set() for w in watchers), "watchers to start")
            games = [
                asyncio.create_task(play_game(table, after_action=arm_the_kill if t == 0 else None))
                for t, table in enumerate(seats)
            ]
            try:
                async with asyncio.timeout(80):
                    await asyncio.gather(*games)
                    streams = await asyncio.gather(*watching)
            finally:
                for task in (*games, *watching):
                    task.cancel()

            assert a.process is not None and a.process.returncode == -9
            assert len(lost) == 1
            # Only A's death shows: the call cut by it, no refusal, no error from B.
            for s in everyone:
                for failure in s.failures:
                    assert failure.address in (a.address, via_proxy), failure
                    assert failure.code == grpc.StatusCode.UNAVAILABLE, failure
            # The action whose answer was lost: retried on B, answered as A had.
            (request_id, answer), *_ = lost.items()
            (retried,) = [ack for s in seats[0] for ack in s.acks if ack.request_id == request_id]
            assert retried.attempts > 1 and retried.reply == answer
            # Every watcher lost A mid-game and resumed on B.
            for w in watchers:
                assert w.ends and all(code == grpc.StatusCode.UNAVAILABLE for code, _, _ in w.ends)

            for table, w, events in zip(seats, watchers, streams, strict=True):
                log = await assert_acks_logged_once(
                    con, table[0].table_id, [ack for s in table for ack in s.acks]
                )
                assert_stream_is_log(events, log)
                assert w.position == log[-1].seq
    finally:
        if proxy is not None:
            await proxy.close()
        await con.close()
