"""Joker swaps at the terminal, on a table dealt from a known deck.

The table is created as the matchmaker would (service credential), with a deck
in a fixed order; the client finds it when the matchmaker says the player is
already seated (ALREADY_SEATED), as it would after losing its own records.
"""

from __future__ import annotations

from pathlib import Path

import grpc

from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc, game_pb2, game_pb2_grpc
from tests.game.harness import card, deck_order, service_auth

from .harness import Terminal, servers

DEVICE = "device-swap-test-0001"
HAND = "QH QD QC JK QS 2C 3C 7S 8S 9S 4C 5H KD"


async def test_a_swapped_joker_is_placed_automatically_or_where_the_player_says(
    fresh_dsn: str, tmp_path: Path
) -> None:
    (tmp_path / "device_id").write_text(DEVICE)
    async with servers(fresh_dsn) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            reply = await auth_pb2_grpc.AuthServiceStub(channel).Login(
                auth_pb2.LoginRequest(device_id=DEVICE, display_name="Sam")
            )
        order = deck_order(2, {0: [card(c) for c in HAND.split()]}, stock=[card("4D")])
        request = game_pb2.CreateTableRequest(
            ruleset="cafe",
            players=[
                game_pb2.SeatedPlayer(player_id=reply.player_id, display_name="Sam"),
                game_pb2.SeatedPlayer(player_id="bot-swap", display_name="Bot", is_bot=True),
            ],
            deck_order=order,
        )
        async with grpc.aio.insecure_channel(running.game_address) as channel:
            await game_pb2_grpc.GameServiceStub(channel).CreateTable(
                request, metadata=service_auth()
            )

        term = Terminal(
            *("play", "--server", running.address, "--game", running.game_address),
            *("--config-dir", str(tmp_path)),
        )
        try:
            await term.expect("already seated at a table: going back to it")
            assert await term.next_turn()
            await term.send("d")
            await term.expect("You drew 4♦")
            await term.send("m QH QD QC JK")
            await term.expect(r"\[1\] you: Q♥ Q♦ Q♣ JK\(Q♠\)")
            # A full group: once the Q♠ is in, the joker fits nowhere. The client asks.
            await term.send("s 1 QS")
            await term.expect("The joker fits no meld on the table: where does it go?")
            await term.expect(r"for example: (2C 3C JK|JK 2C 3C)")
            await term.send("2C 3C")
            await term.expect(r"\[2\] you: 2♣ 3♣ JK\(4♣\)")
            await term.send("m 7s 8s 9s")
            await term.expect(r"\[3\] you: 7♠ 8♠ 9♠")
            # Here the joker can go on at once: the first meld that takes it.
            await term.send("s 2 4c")
            await term.expect(r"\[2\] you: 2♣ 3♣ 4♣ JK\(5♣\)")
            await term.expect(r"Your hand \(3\): 5♥   4♦ K♦")
            await term.send("x kd")
            await term.expect("You discarded K♦")
            await term.send("q")
            await term.expect(r"\[y/N\]")
            await term.send("y")
            await term.expect("You left the table")
            assert await term.finish() == 0
        finally:
            term.kill()
