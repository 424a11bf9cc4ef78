"""Real game servers on port 0 and real gRPC clients, for the service tests."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

import grpc

from clients.cli.viewstate import state_from_view
from services.common.auth import issue_service_token
from services.common.pb.rummy.v1 import (
    auth_pb2,
    auth_pb2_grpc,
    game_pb2,
    game_pb2_grpc,
    table_pb2,
)
from services.game.rules.actions import (
    Action,
    Discard,
    DrawStock,
    LayOff,
    Meld,
    SwapJoker,
    TakeDiscard,
)
from services.game.rules.bots import GreedyBot
from services.game.server import GameConfig, GameServer

SECRET = "test-secret-that-is-long-enough-for-hs256"


async def start_server(dsn: str, **overrides: object) -> GameServer:
    server = GameServer(GameConfig(dsn=dsn, secret=SECRET, allow_test_decks=True, **overrides))  # type: ignore[arg-type]
    await server.start()
    return server


@dataclass
class Player:
    """One signed-in player talking to one replica."""

    channel: grpc.aio.Channel
    token: str
    player_id: str
    name: str
    game: game_pb2_grpc.GameServiceStub = field(init=False)

    def __post_init__(self) -> None:
        self.game = game_pb2_grpc.GameServiceStub(self.channel)

    @property
    def auth(self) -> tuple[tuple[str, str]]:
        return (("authorization", f"Bearer {self.token}"),)

    async def view(self, table_id: str) -> table_pb2.TableView:
        reply = await self.game.GetTable(
            game_pb2.GetTableRequest(table_id=table_id), metadata=self.auth
        )
        return reply.view

    async def send(self, table_id: str, action: Action, **common: object) -> table_pb2.TableView:
        """Send one engine action through the matching RPC; returns my new view."""
        base = {"table_id": table_id, **common}
        g = self.game
        match action:
            case DrawStock():
                r = await g.DrawStock(game_pb2.DrawStockRequest(**base), metadata=self.auth)
            case TakeDiscard():
                r = await g.TakeDiscard(game_pb2.TakeDiscardRequest(**base), metadata=self.auth)
            case Meld():
                specs = [game_pb2.MeldSpec(card_ids=m.cards) for m in action.melds]
                r = await g.Meld(game_pb2.MeldRequest(melds=specs, **base), metadata=self.auth)
            case LayOff():
                r = await g.LayOff(
                    game_pb2.LayOffRequest(
                        meld_id=action.meld_id, card_ids=action.cards, side=int(action.side), **base
                    ),
                    metadata=self.auth,
                )
            case SwapJoker():
                assert action.lay_off is not None
                r = await g.SwapJoker(
                    game_pb2.SwapJokerRequest(
                        meld_id=action.meld_id,
                        joker_card_id=action.joker,
                        replacement_card_ids=[action.replacement],
                        lay_off=game_pb2.LayOffPlacement(
                            meld_id=action.lay_off.meld_id,
                            card_ids=action.lay_off.cards,
                            side=int(action.lay_off.side),
                        ),
                        **base,
                    ),
                    metadata=self.auth,
                )
            case Discard():
                r = await g.Discard(
                    game_pb2.DiscardRequest(card_id=action.card, **base), metadata=self.auth
                )
            case _:
                raise AssertionError(f"no RPC for {action}")
        return r.view

    async def watch(self, table_id: str, after: int = 0) -> AsyncIterator[table_pb2.TableEvent]:
        call = self.game.Watch(
            game_pb2.WatchRequest(table_id=table_id, after_seq=after), metadata=self.auth
        )
        async for reply in call:
            yield reply.event


async def login(channel: grpc.aio.Channel, name: str) -> Player:
    stub = auth_pb2_grpc.AuthServiceStub(channel)
    reply = await stub.Login(
        auth_pb2.LoginRequest(device_id=f"device-{uuid.uuid4().hex}", display_name=name)
    )
    return Player(channel, reply.token, reply.player_id, name)


def service_auth() -> tuple[tuple[str, str]]:
    token = issue_service_token("matchmaker", secret=SECRET, now=time.time())
    return (("authorization", f"Bearer {token}"),)


async def create_table(
    channel: grpc.aio.Channel,
    players: Sequence[Player],
    *,
    deck_order: Sequence[int] = (),
    **options: int,
) -> str:
    stub = game_pb2_grpc.GameServiceStub(channel)
    reply = await stub.CreateTable(
        game_pb2.CreateTableRequest(
            ruleset="cafe",
            options=table_pb2.TableOptions(**options),
            players=[
                game_pb2.SeatedPlayer(player_id=p.player_id, display_name=p.name) for p in players
            ],
            deck_order=deck_order,
        ),
        metadata=service_auth(),
    )
    return reply.table_id


async def greedy_turn(
    player: Player, table_id: str, view: table_pb2.TableView, bot: GreedyBot
) -> table_pb2.TableView:
    """Play one whole turn with the greedy bot, through the API only."""
    seat = view.my_seat
    while view.phase in (table_pb2.PHASE_DRAW, table_pb2.PHASE_PLAY) and view.current_seat == seat:
        action = bot.move(state_from_view(view), seat)
        if action is None:
            return view
        view = await player.send(table_id, action)
    return view


async def play_to_end(players: Sequence[Player], table_id: str, max_turns: int = 400) -> None:
    """Every player plays greedily, in turn, until the game is over."""
    bot = GreedyBot()
    by_seat = {}
    for p in players:
        v = await p.view(table_id)
        by_seat[v.my_seat] = p
    view = await players[0].view(table_id)
    for _ in range(max_turns):
        if view.phase == table_pb2.PHASE_GAME_OVER:
            return
        current = by_seat[view.current_seat]
        view = await greedy_turn(current, table_id, await current.view(table_id), bot)
    raise AssertionError("the game did not end")
