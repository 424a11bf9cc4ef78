"""`contract`'s "Puis-je ?" over the API: a claim names the discard it asks for,
as the claim window showed it. A claim for a card no longer on offer is refused
with ABORTED and changes nothing; it never becomes a claim for the card on
offer instead."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from prometheus_client import REGISTRY

from services.common.errors import error_info
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game.rules.ruleset import CONTRACT

from ..rules.helpers import deck_order as scripted_order
from ..rules.test_claims import HANDS
from .harness import LONG_TURNS_MS, WAIT_S, Player, create_table, login, refused, snapshot
from .stored import TableDb, table_db

CHANGED = (grpc.StatusCode.ABORTED, "CLAIM_CARD_CHANGED")


async def contract_table(
    channel: grpc.aio.Channel, players: list[Player], *, claim_window_ms: int
) -> str:
    """A contract table of hands with no contract in them: seat 0 draws the KS, and
    the QD turned up is the discard on offer."""
    order = scripted_order(HANDS[: len(players)], "QD", "KS KH KD KC QS QH", ruleset=CONTRACT)
    return await create_table(
        channel,
        players,
        deck_order=order,
        ruleset="contract",
        turn_timer_ms=LONG_TURNS_MS,
        claim_window_ms=claim_window_ms,
    )


async def claim(player: Player, table_id: str, card_id: int) -> Any:
    return await player.call("Claim", game_pb2.ClaimRequest(table_id=table_id, card_id=card_id))


async def unchanged(db: TableDb, players: list[Player], table_id: str) -> tuple[Any, ...]:
    return await snapshot(players, table_id), await db.log(table_id)


async def test_a_claim_names_the_card_on_offer_and_a_changed_card_is_aborted(
    channel: grpc.aio.Channel, fresh_dsn: str
) -> None:
    players = [await login(channel, f"C{i}") for i in range(3)]
    active, nearest, farther = players
    table_id = await contract_table(channel, players, claim_window_ms=60_000)
    await active.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
    window = (await farther.view(table_id)).claim_window
    qd = window.card.id
    assert window.card.code == "QD"
    not_offered = next(c.id for c in (await nearest.view(table_id)).hand if c.code == "AH")

    async with table_db(fresh_dsn) as db:
        before = await unchanged(db, players, table_id)
        assert await refused(claim(nearest, table_id, not_offered)) == CHANGED
        unknown = (grpc.StatusCode.INVALID_ARGUMENT, "CARD_UNKNOWN")
        assert await refused(claim(nearest, table_id, CONTRACT.deck.size)) == unknown
        assert await unchanged(db, players, table_id) == before

        assert (await claim(nearest, table_id, qd)).view.claim_window.claimed_by_me

        # The active seat discards: the QD goes to its claimant. The next stock
        # draw offers the KS.
        ks = next(c.id for c in (await active.view(table_id)).hand if c.code == "KS")
        await active.call("Discard", game_pb2.DiscardRequest(table_id=table_id, card_id=ks))
        assert qd in [c.id for c in (await nearest.view(table_id)).hand]
        await nearest.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
        assert (await farther.view(table_id)).claim_window.card.id == ks

        # A claim still aimed at the QD (sent from the earlier window) is not
        # moved onto the KS.
        before = await unchanged(db, players, table_id)
        try:
            await claim(farther, table_id, qd)
            raise AssertionError("a claim for the QD was applied to the KS")
        except grpc.aio.AioRpcError as error:
            info = error_info(error)
            assert (error.code(), info.reason if info else None) == CHANGED
            assert "KS" in (error.details() or ""), "the sentence names the card on offer"
        assert await unchanged(db, players, table_id) == before

        view = (await claim(farther, table_id, ks)).view
        assert view.claim_window.claimed_by_me and view.phase == table_pb2.PHASE_PLAY
        made = [e.seq for e in await db.log(table_id) if e.kind == table_pb2.EVENT_KIND_CLAIM_MADE]
        assert len(made) == 2, "one claim in each window, the one its claimant saw"


TIMEOUTS = "rummy_timeouts_fired_total"
WINDOWS_CLOSED = "rummy_actions_total"
WINDOW_LABELS = {"action": "ClaimWindowClosed", "outcome": "applied"}


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


async def test_a_window_nobody_claims_is_closed_by_the_table_clock_and_the_turn_goes_on(
    channel: grpc.aio.Channel,
) -> None:
    """The sweeper closes the window at its deadline with an event of its own: the
    turn stays with the active seat (its own timer is far off), the view no longer
    offers the card, and the next discard is a plain one."""
    players = [await login(channel, f"C{i}") for i in range(2)]
    active, other = players
    table_id = await contract_table(channel, players, claim_window_ms=500)
    watcher = other.watch(table_id)
    before = (sample(TIMEOUTS), sample(WINDOWS_CLOSED, WINDOW_LABELS))
    drawn = await active.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
    offered = drawn.view.claim_window.card
    assert offered.code == "QD"

    closed = await watcher.until(lambda e: e.HasField("claim_window_closed"))
    # Counted as a window closed, not as a turn that timed out (once committed and
    # announced: the count follows the announcement).
    async with asyncio.timeout(WAIT_S):
        while sample(WINDOWS_CLOSED, WINDOW_LABELS) == before[1]:
            await asyncio.sleep(0.01)
    after = (sample(TIMEOUTS), sample(WINDOWS_CLOSED, WINDOW_LABELS))
    assert (after[0] - before[0], after[1] - before[1]) == (0, 1)
    assert closed.kind == table_pb2.EVENT_KIND_CLAIM_WINDOW_CLOSED
    assert closed.claim_window_closed.card == offered
    assert closed.version == drawn.version + 1, "one move of the table clock"
    view = await other.view(table_id)
    assert not view.HasField("claim_window")
    assert (view.current_seat, view.phase) == (0, table_pb2.PHASE_PLAY)
    # Claimed on the way from a window that has shut: a lost race.
    assert await refused(claim(other, table_id, offered.id)) == (
        grpc.StatusCode.ABORTED,
        "CLAIM_WINDOW_CLOSED",
    )

    ks = next(c.id for c in (await active.view(table_id)).hand if c.code == "KS")
    await active.call("Discard", game_pb2.DiscardRequest(table_id=table_id, card_id=ks))
    discarded = await watcher.until(lambda e: e.HasField("discarded"))
    assert [e.kind for e in watcher.events].count(table_pb2.EVENT_KIND_CLAIM_WINDOW_CLOSED) == 1
    assert discarded.seq == closed.seq + 1, "nothing else happened in between"
    watcher.call.cancel()
