"""Conflicting actions on one table, sent at once through two replicas: exactly one
applies. Retries with a request id apply once and answer what the first answered,
refusals included; a stale expected version is refused and changes nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from services.common.errors import error_info
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game.rules.actions import Action, Discard, DrawStock, Leave, TakeDiscard

from .harness import Player, create_table, deck_order, login, refused, snapshot
from .stored import table_db

LOST_RACE = {
    (grpc.StatusCode.FAILED_PRECONDITION, "ALREADY_DREW"),
    (grpc.StatusCode.ABORTED, "CONFLICT"),
    (grpc.StatusCode.ABORTED, "VERSION_STALE"),
}


async def seated(channels: list[grpc.aio.Channel]) -> tuple[list[Player], list[Player], str]:
    """Two players, each with a client on replica A and one on replica B."""
    a, b = channels
    on_a = [await login(a, f"P{i}") for i in range(2)]
    on_b = [Player(b, p.token, p.player_id, p.name) for p in on_a]
    # Dealt in id order: no joker anywhere near the hands or the top of the stock.
    table_id = await create_table(a, on_a, deck_order=deck_order(2))
    for p in on_b:
        await p.view(table_id)
    return on_a, on_b, table_id


def outcomes(results: list[Any]) -> tuple[list[Any], list[tuple[grpc.StatusCode, str | None]]]:
    applied, refusals = [], []
    for r in results:
        if isinstance(r, grpc.aio.AioRpcError):
            info = error_info(r)
            refusals.append((r.code(), info.reason if info else None))
        elif isinstance(r, BaseException):
            raise r
        else:
            applied.append(r)
    return applied, refusals


@pytest.mark.parametrize(
    "moves",
    [
        pytest.param([DrawStock()] * 10, id="ten-draws"),
        pytest.param([DrawStock(), TakeDiscard()] * 5, id="draw-vs-take-discard"),
    ],
)
@pytest.mark.parametrize("with_version", [False, True], ids=["no-version", "expected-version"])
async def test_concurrent_conflicting_draws_apply_exactly_once(
    channels: list[grpc.aio.Channel], fresh_dsn: str, moves: list[Action], with_version: bool
) -> None:
    on_a, on_b, table_id = await seated(channels)
    before = await on_a[0].view(table_id)
    extra = {"expected_version": before.version} if with_version else {}
    # Half of the calls go through each replica, all at once.
    calls = [
        (on_a if i % 2 else on_b)[0].send(table_id, move, **extra) for i, move in enumerate(moves)
    ]
    applied, refusals = outcomes(await asyncio.gather(*calls, return_exceptions=True))

    assert len(applied) == 1
    assert len(refusals) == len(moves) - 1
    assert set(refusals) <= LOST_RACE, refusals
    after = await on_a[0].view(table_id)
    assert after.version == before.version + 1 == applied[0].version
    assert after.phase == table_pb2.PHASE_PLAY
    assert len(after.hand) == len(before.hand) + 1
    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    draws = [x for x in log if x.version > before.version]
    drew = isinstance(applied[0], game_pb2.DrawStockResponse)
    kind = table_pb2.EVENT_KIND_DREW if drew else table_pb2.EVENT_KIND_TOOK_DISCARD
    assert [(x.kind, x.event.seat) for x in draws] == [(kind, 0)]  # type: ignore[attr-defined]


async def test_a_request_id_sent_many_times_at_once_applies_once(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    on_a, on_b, table_id = await seated(channels)
    before = await on_a[0].view(table_id)
    calls = [
        (on_a if i % 2 else on_b)[0].send(table_id, DrawStock(), request_id="draw-once")
        for i in range(8)
    ]
    replies = await asyncio.gather(*calls)
    assert {r.SerializeToString() for r in replies} == {replies[0].SerializeToString()}
    assert replies[0].version == before.version + 1
    assert replies[0].HasField("card")

    # Much later, on either replica, the retry still answers the first answer.
    discard = next(c.id for c in replies[0].view.hand if c.id != replies[0].card.id)
    await on_a[0].send(table_id, Discard(discard))
    late = await on_b[0].send(table_id, DrawStock(), request_id="draw-once")
    assert late.SerializeToString() == replies[0].SerializeToString()
    async with table_db(fresh_dsn) as db:
        log = await db.log(table_id)
    assert [x.kind for x in log if x.kind == table_pb2.EVENT_KIND_DREW] == [
        table_pb2.EVENT_KIND_DREW
    ]
    assert (await on_a[0].view(table_id)).version == before.version + 2


async def test_a_refused_request_id_stays_refused_when_retried(
    channels: list[grpc.aio.Channel],
) -> None:
    on_a, on_b, table_id = await seated(channels)
    # Seat 1 tries to draw during seat 0's turn.
    first = await refused(on_a[1].send(table_id, DrawStock(), request_id="too-early"))
    assert first == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")

    # Seat 0 plays its turn; now a draw by seat 1 would be legal...
    reply = await on_a[0].send(table_id, DrawStock())
    await on_a[0].send(table_id, Discard(reply.card.id))
    before = await snapshot([*on_a, *on_b], table_id)
    assert before[1].current_seat == 1 and before[1].phase == table_pb2.PHASE_DRAW

    # ...but the retried request is the same request: same refusal, nothing applied.
    for client in (on_a[1], on_b[1]):
        assert await refused(client.send(table_id, DrawStock(), request_id="too-early")) == first
    assert await snapshot([*on_a, *on_b], table_id) == before
    fresh = await on_b[1].send(table_id, DrawStock())
    assert fresh.version == before[0].version + 1


async def test_a_stale_expected_version_is_aborted_and_changes_nothing(
    channels: list[grpc.aio.Channel],
) -> None:
    on_a, on_b, table_id = await seated(channels)
    seen = await on_a[0].view(table_id)
    drew = await on_a[0].send(table_id, DrawStock(), expected_version=seen.version)
    assert drew.version == seen.version + 1

    before = await snapshot([*on_a, *on_b], table_id)
    stale = on_b[0].send(table_id, Discard(drew.card.id), expected_version=seen.version)
    assert await refused(stale) == (grpc.StatusCode.ABORTED, "VERSION_STALE")
    assert await snapshot([*on_a, *on_b], table_id) == before

    done = await on_b[0].send(table_id, Discard(drew.card.id), expected_version=drew.version)
    assert done.version == drew.version + 1


async def test_a_request_id_sent_with_another_move_is_refused_and_changes_nothing(
    channels: list[grpc.aio.Channel],
) -> None:
    on_a, on_b, table_id = await seated(channels)
    drew = await on_a[0].send(table_id, DrawStock())
    hand = [c.id for c in drew.view.hand]
    first = await on_a[0].send(table_id, Discard(hand[0]), request_id="r1")
    refused_first = await refused(on_a[1].send(table_id, Discard(hand[1]), request_id="r2"))
    assert refused_first == (grpc.StatusCode.FAILED_PRECONDITION, "MUST_DRAW_FIRST")
    before = await snapshot([*on_a, *on_b], table_id)

    # The same ids, asking something else (a client whose id counter started again):
    # refused, not answered with the first request's answer, and nothing applied.
    reused = (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REUSED")
    assert await refused(on_b[0].send(table_id, Discard(hand[1]), request_id="r1")) == reused
    later = on_a[1].send(table_id, Discard(hand[1]), request_id="r2", expected_version=1)
    assert await refused(later) == reused
    assert await snapshot([*on_a, *on_b], table_id) == before

    # The same id with another call (a Leave, whose request holds the same bytes
    # as a draw's): refused too, and the game goes on.
    assert await refused(on_b[0].send(table_id, Leave(), request_id="r1")) == reused
    assert await snapshot([*on_a, *on_b], table_id) == before

    # The same request again is a retry: its first answer, on either replica.
    again = await on_b[0].send(table_id, Discard(hand[0]), request_id="r1")
    assert again.SerializeToString() == first.SerializeToString()
    assert await refused(on_b[1].send(table_id, Discard(hand[1]), request_id="r2")) == (
        refused_first
    )


async def test_refusals_at_a_finished_table_are_not_kept(
    channels: list[grpc.aio.Channel], fresh_dsn: str
) -> None:
    on_a, _, table_id = await seated(channels)
    await on_a[0].send(table_id, Leave())  # the last other player left: the game ends
    for n in range(5):
        late = on_a[1].send(table_id, DrawStock(), request_id=f"late-{n}")
        assert await refused(late) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")
    async with table_db(fresh_dsn) as db:
        kept = await db.kept_requests(table_id)
    assert kept == 1  # the leave's answer only
