"""The players' side: Enqueue streams from this process, spread over several
connections to every matchmaker replica."""

from __future__ import annotations

import asyncio
import math
import time

import grpc

from bench.common import channel
from bench.matchmaker.settings import OPTIONS, SECRET
from bench.matchmaker.tickets import Ticket
from services.common.auth import issue_token
from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import matchmaker_pb2_grpc


class Clients:
    """Enqueue streams spread over several connections to every replica."""

    def __init__(self, ports: list[int], per_replica: int) -> None:
        self.channels = [channel(p, i) for p in ports for i in range(per_replica)]
        self.stubs: list[matchmaker_pb2_grpc.MatchmakerServiceAsyncStub] = [
            matchmaker_pb2_grpc.MatchmakerServiceStub(c) for c in self.channels
        ]
        self.tokens: dict[str, tuple[tuple[str, str]]] = {}

    async def close(self) -> None:
        for c in self.channels:
            await c.close()

    def sign_in(self, players: list[str]) -> None:
        """Tokens issued before a phase starts, as a player's app holds one before
        it taps "play": signing them is the clients' work, not the service's."""
        now = time.time()
        for player_id in players:
            token = issue_token(player_id, secret=SECRET, now=now)
            self.tokens[player_id] = (("authorization", f"Bearer {token}"),)

    async def follow(self, i: int, ticket: Ticket, opened: asyncio.Semaphore | None) -> None:
        """One player's stream, from the Enqueue call to the match message."""
        stub = self.stubs[i % len(self.stubs)]
        request = mm.EnqueueRequest(table_size=ticket.size, ruleset="cafe", options=OPTIONS)
        held = opened is not None
        if opened is not None:
            await opened.acquire()
        ticket.sent = time.perf_counter()
        try:
            call = stub.Enqueue(request, metadata=self.tokens[ticket.player_id])
            async for update in call:
                kind = update.WhichOneof("update")
                if kind == "ticket" and math.isnan(ticket.queued):
                    ticket.queued = time.perf_counter()
                    if held and opened is not None:
                        opened.release()
                        held = False
                elif kind == "match":
                    ticket.matched = time.perf_counter()
                    ticket.table_id = update.match.table_id
        except grpc.aio.AioRpcError as error:
            ticket.error = f"{error.code().name}: {error.details()}"
        finally:
            if held and opened is not None:
                opened.release()
