"""GetHint's `opens` says what the engine would accept from those melds at that
table: its own opening threshold, the exemption of a hand laid almost whole, and
the deal's contract. Checked by laying the hinted melds through the API."""

from __future__ import annotations

import grpc
import pytest

from services.common.pb.rummy.v1 import game_pb2
from services.game.rules.ruleset import CONTRACT, RAMI51, Ruleset

from ..rules.helpers import deck_order as scripted_order
from .harness import LONG_TURNS_MS, Player, create_table, login, refused

RAMI51_33 = "4S 5S 6S 6H 6D 6C KH JD 2C 9H 3D QC 8S"
"""Best melds: 4S 5S 6S and 6H 6D 6C, 33 points for an opening."""
RAMI51_LOW_WHOLE = "AS 2S 3S AS 2S 3S AH 2H 3H AH 2H 3H KD"
"""Four runs of 6 points (24 in all) that leave one card: no threshold then."""
CONTRACT_RUN = "4S 5S 6S 7S KH 9D 2C QH 3D JC"
"""Best meld: the run 4S-7S, while the first deal's contract is two groups."""
CONTRACT_GROUPS = "7S 7H 7D 9S 9H 9C 2C 4D JS KH"
"""Best melds: 7-7-7 and 9-9-9, the first deal's contract."""
CONTRACT_IN_HAND = "5S 6S 7S 8S 8H 8D 2C 2D 2H QD"
"""Lightest hand: 5S-7S, 8-8-8 and 2-2-2 (a run the first deal's contract does not
take); the contract, two groups, is 8-8-8 and 2-2-2."""
OTHER = {
    "rami51": "7C 8C 9D TH JH QD KS AD 2D 3C 4H 5D 5C",
    "contract": "8H 8D TS TC JH QS KC AC 2H 3S",
}


async def hint(player: Player, table_id: str) -> game_pb2.GetHintResponse:
    reply: game_pb2.GetHintResponse = await player.call(
        "GetHint", game_pb2.GetHintRequest(table_id=table_id)
    )
    return reply


async def table_with(
    channel: grpc.aio.Channel, ruleset: Ruleset, hand: str, **options: int
) -> tuple[Player, str]:
    players = [await login(channel, f"H{i}") for i in range(2)]
    order = scripted_order([hand, OTHER[ruleset.name]], "KC", ruleset=ruleset)
    table_id = await create_table(
        channel,
        players,
        deck_order=order,
        ruleset=ruleset.name,
        turn_timer_ms=LONG_TURNS_MS,
        **options,
    )
    return players[0], table_id


async def lay_hinted(player: Player, table_id: str, melds: list[game_pb2.MeldSpec]) -> object:
    """Draw, then lay the hinted melds: the engine's own verdict."""
    await player.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))
    return await player.call("Meld", game_pb2.MeldRequest(table_id=table_id, melds=melds))


@pytest.mark.parametrize(
    ("threshold", "opens"), [(30, True), (0, False), (51, False)], ids=["30", "default-40", "51"]
)
async def test_a_rami51_hint_opens_against_the_tables_own_threshold(
    channel: grpc.aio.Channel, threshold: int, opens: bool
) -> None:
    me, table_id = await table_with(channel, RAMI51, RAMI51_33, opening_threshold=threshold)
    got = await hint(me, table_id)
    assert got.opening_points == 33
    assert sorted(len(m.card_ids) for m in got.melds) == [3, 3]
    assert got.opens is opens
    assert got.refusal_reason == ("" if opens else "OPENING_TOO_LOW")
    laid = lay_hinted(me, table_id, list(got.melds))
    if opens:
        await laid
    else:
        assert await refused(laid) == (grpc.StatusCode.FAILED_PRECONDITION, "OPENING_TOO_LOW")


async def test_a_rami51_hint_that_lays_all_but_one_card_opens_below_the_threshold(
    channel: grpc.aio.Channel,
) -> None:
    me, table_id = await table_with(channel, RAMI51, RAMI51_LOW_WHOLE)
    # Before the draw: laid after it, these melds would leave two cards.
    before = await hint(me, table_id)
    assert (before.opening_points, len(before.melds)) == (24, 4)
    assert not before.opens and before.refusal_reason == "OPENING_TOO_LOW"
    assert await refused(lay_hinted(me, table_id, list(before.melds))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "OPENING_TOO_LOW",
    )
    # The draw (the 4S) joins a run: the melds leave only the KD.
    got = await hint(me, table_id)
    assert (got.opening_points, len(got.melds)) == (28, 4)
    assert got.opens  # the 40 points are waived for an opening that leaves one card
    await me.call("Meld", game_pb2.MeldRequest(table_id=table_id, melds=list(got.melds)))


@pytest.mark.parametrize(
    ("hand", "opens"),
    [(CONTRACT_GROUPS, True), (CONTRACT_RUN, False)],
    ids=["two groups", "a run"],
)
async def test_a_contract_hint_opens_only_with_the_deals_contract(
    channel: grpc.aio.Channel, hand: str, opens: bool
) -> None:
    me, table_id = await table_with(channel, CONTRACT, hand)
    got = await hint(me, table_id)
    assert got.melds and got.opens is opens
    assert got.refusal_reason == ("" if opens else "CONTRACT_UNMET")
    assert bool(got.refusal_message) is not opens
    laid = lay_hinted(me, table_id, list(got.melds))
    if opens:
        await laid
    else:
        assert await refused(laid) == (grpc.StatusCode.FAILED_PRECONDITION, "CONTRACT_UNMET")


async def test_a_contract_hint_proposes_the_contract_rather_than_the_lightest_hand(
    channel: grpc.aio.Channel,
) -> None:
    me, table_id = await table_with(channel, CONTRACT, CONTRACT_IN_HAND)
    got = await hint(me, table_id)
    assert got.opens and sorted(len(m.card_ids) for m in got.melds) == [3, 3]
    await lay_hinted(me, table_id, list(got.melds))


async def test_a_rami51_hint_says_the_opening_must_use_the_taken_discard(
    channel: grpc.aio.Channel,
) -> None:
    me, table_id = await table_with(channel, RAMI51, RAMI51_33, opening_threshold=30)
    await me.call("TakeDiscard", game_pb2.TakeDiscardRequest(table_id=table_id))  # the KC
    got = await hint(me, table_id)
    assert got.opening_points == 33 and not got.opens
    assert got.refusal_reason == "TAKEN_CARD_UNUSED" and "discard pile" in got.refusal_message
    melds = game_pb2.MeldRequest(table_id=table_id, melds=list(got.melds))
    assert await refused(me.call("Meld", melds)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "TAKEN_CARD_UNUSED",
    )
