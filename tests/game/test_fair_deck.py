"""Each deal is committed before the first card and revealed at the round's end."""

from __future__ import annotations

import grpc

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules.fairness import verify_deck

from .decks import shuffled_deck
from .harness import create_table, login, play_to_end


async def test_the_revealed_deck_matches_the_commitment_of_the_deal(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, f"F{i}") for i in range(2)]
    deck = shuffled_deck(11)
    table_id = await create_table(channel, players, deck_order=deck)
    first_view = await players[0].view(table_id)
    await play_to_end(players, table_id)
    events = await players[0].watch(table_id, 0).to_end()
    dealt = next(e for e in events if e.kind == table_pb2.EVENT_KIND_DEALT)
    revealed = next(e for e in events if e.kind == table_pb2.EVENT_KIND_DECK_REVEALED)
    shown = dealt.dealt.deck_commitment
    assert shown and shown == first_view.deck_commitment
    r = revealed.deck_revealed
    assert list(r.order) == deck
    assert len(bytes.fromhex(r.salt)) >= 16, "a production-strength salt"
    assert verify_deck(r.order, r.seed, r.salt, shown)
    assert not verify_deck([*r.order[1:], r.order[0]], r.seed, r.salt, shown)
    kinds = [e.kind for e in events]
    assert kinds.index(table_pb2.EVENT_KIND_DECK_REVEALED) > kinds.index(
        table_pb2.EVENT_KIND_ROUND_ENDED
    )
