"""A meld's kind named in the request (MeldSpec.kind) over the API: the server
reads the cards only that way, for a Meld and for the new meld of a joker swap,
and every seat's JokerSwapped event says where the joker went."""

from __future__ import annotations

import grpc

from services.common.pb.rummy.v1 import game_pb2, table_pb2

from .harness import (
    JOKERS,
    LONG_TURNS_MS,
    card,
    create_table,
    deck_order,
    kind_is,
    login,
    refused,
)

GROUP, RUN = table_pb2.MELD_KIND_GROUP, table_pb2.MELD_KIND_RUN
MISMATCH = (grpc.StatusCode.FAILED_PRECONDITION, "MELD_KIND_MISMATCH")
JOKER = JOKERS[0]
HAND = [
    *(card(c) for c in ("2S", "3S")),
    JOKER,
    *(card(c) for c in ("4S", "7H", "7D", "7C", "9S", "9H", "KD", "QC", "5C", "8D")),
]


def spec(codes: str, kind: int) -> game_pb2.MeldSpec:
    ids = [JOKER if c == "JK" else card(c) for c in codes.split()]
    return game_pb2.MeldSpec(card_ids=ids, kind=table_pb2.MeldKind.ValueType(kind))


async def test_named_kinds_for_a_meld_and_a_swap_s_new_meld(channel: grpc.aio.Channel) -> None:
    players = [await login(channel, f"K{i}") for i in range(2)]
    me = players[0]
    order = deck_order(2, {0: HAND}, discard=card("AD"), stock=[card("AC")])
    table_id = await create_table(channel, players, deck_order=order, turn_timer_ms=LONG_TURNS_MS)
    watchers = [p.watch(table_id) for p in players]
    await me.call("DrawStock", game_pb2.DrawStockRequest(table_id=table_id))

    def meld(*specs: game_pb2.MeldSpec) -> game_pb2.MeldRequest:
        return game_pb2.MeldRequest(table_id=table_id, melds=specs)

    version = (await me.view(table_id)).version
    assert await refused(me.call("Meld", meld(spec("7H 7D 7C", RUN)))) == MISMATCH
    assert (await me.view(table_id)).version == version
    view = (await me.call("Meld", meld(spec("2S 3S JK", RUN), spec("7H 7D 7C", GROUP)))).view
    run, group = view.melds
    assert (run.kind, group.kind) == (RUN, GROUP)
    assert run.jokers[0].rank == "4"

    def swap(kind: int) -> game_pb2.SwapJokerRequest:
        return game_pb2.SwapJokerRequest(
            table_id=table_id,
            meld_id=run.id,
            joker_card_id=JOKER,
            replacement_card_ids=[card("4S")],
            new_meld=spec("9S 9H JK", kind),
        )

    assert await refused(me.call("SwapJoker", swap(RUN))) == MISMATCH
    assert (await me.view(table_id)).version == view.version
    view = (await me.call("SwapJoker", swap(GROUP))).view
    placed = next(m for m in view.melds if JOKER in [c.id for c in m.cards])
    assert placed.kind == GROUP

    for watcher in watchers:
        event = await watcher.until(kind_is(table_pb2.EVENT_KIND_JOKER_SWAPPED))
        watcher.cancel()
        assert event.joker_swapped.placed_in == placed, "every seat sees where the joker went"
