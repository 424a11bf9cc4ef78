"""A player the elimination cap puts out leaves the table in the same commit,
whoever's move ended the round (a person's, or a bot's played by the table's
clock): free to queue for another game while the others play on."""

from __future__ import annotations

import uuid

import asyncpg
import grpc
import pytest

from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.actions import Discard, DrawStock, Meld, MeldSpec
from services.matchmaker.queueing import seated_at

from .decks import card, deck_order
from .harness import CALL_TIMEOUT_S, kind_is, login, service_auth

OUT = ("AS 2S 3S", "4H 5H 6H", "7D 8D 9D", "TC JC QC KC")
"""Seat 0's melds once it has drawn the KC: it goes out on its first turn."""


def cards(text: str) -> list[int]:
    return [card(c) for c in text.split()]


HANDS = {
    0: cards(" ".join(OUT).replace("KC", "5C")),
    1: cards("AH 2H 3H AC 2C 3C AD 2D 3D 4S 4C 5S 6S"),  # 67 points
    2: cards("KH KD KS QH QD QS JH JD JS TH TD TS 9H"),  # 129 points
}
CAP = 100


@pytest.mark.parametrize("winner", ["person", "bot"])
async def test_a_player_put_out_by_the_cap_leaves_the_table_as_the_round_ends(
    channel: grpc.aio.Channel, fresh_dsn: str, winner: str
) -> None:
    people = [await login(channel, f"E{i}") for i in range(3)]
    seated = [tables_pb2.SeatedPlayer(player_id=p.player_id, display_name=p.name) for p in people]
    if winner == "bot":
        seated[0] = tables_pb2.SeatedPlayer(player_id="bot-0", display_name="Bot", is_bot=True)
    order = deck_order(3, HANDS, discard=card("KH", 1), stock=[card("KC")])
    reply = await tables_pb2_grpc.TableServiceStub(channel).CreateTable(
        tables_pb2.CreateTableRequest(
            ruleset="cafe",
            options=table_pb2.TableOptions(elimination_cap=CAP, turn_timer_ms=3_600_000),
            players=seated,
            deck_order=order,
            # The bot goes out with the card it draws: a weaker one might hold on.
            bot_level=table_pb2.BOT_LEVEL_STRONG,
        ),
        metadata=service_auth(),
        timeout=CALL_TIMEOUT_S,
    )
    table_id = reply.table_id
    out, on = people[2], people[1]
    watcher = on.watch(table_id)
    if winner == "person":
        first = people[0]
        drew = await first.send(table_id, DrawStock())
        assert drew.card.code == "KC"
        ids = {c.code: c.id for c in drew.view.hand}
        specs = tuple(MeldSpec(tuple(ids[c] for c in m.split())) for m in OUT)
        await first.send(table_id, Meld(specs))
        await first.send(table_id, Discard(ids["5C"]))
    eliminated = await watcher.until(kind_is(table_pb2.EVENT_KIND_PLAYER_ELIMINATED))
    assert eliminated.seat == 2
    watcher.cancel()

    view = await on.view(table_id)
    assert view.seats[2].status == table_pb2.SEAT_STATUS_ELIMINATED
    assert view.phase != table_pb2.PHASE_GAME_OVER, "two players play on"
    con = await asyncpg.connect(fresh_dsn)
    try:
        assert await seated_at(con, out.player_id) is None, "still held at the table"
        assert await seated_at(con, on.player_id) == uuid.UUID(table_id)
    finally:
        await con.close()
