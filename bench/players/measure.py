"""Each PlayerService read timed through the game server, one call at a time,
beside the same statements run bare from asyncpg (the ceiling: what the
database alone costs), and the plans those statements get."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
import grpc

from bench.common import pct
from bench.game.settings import SECRET
from bench.players.load import Loaded
from services.common.auth import issue_token
from services.common.pb.rummy.v1 import player_pb2, player_pb2_grpc
from services.game import page_tokens, player_queries, replay
from services.game.player_servicer import EPOCH, MICROSECOND

WARMUP = 20
PAGE = 20
EVENTS_PAGE = 500
BASELINE = "SELECT display_name FROM players WHERE id = $1"
"""The barest indexed read: one row by its primary key."""


@dataclass(frozen=True)
class Figure:
    """One read at one size: the RPC's latencies and its bare statements'."""

    name: str
    rpc: list[float]
    bare: list[float]
    plan: str

    def line(self) -> str:
        def ms(values: list[float], q: float) -> str:
            return f"{pct(values, q) * 1000:7.2f}"

        ratio = pct(self.rpc, 50) / pct(self.bare, 50)
        return (
            f"  {self.name:<24} {ms(self.rpc, 50)} {ms(self.rpc, 99)} ms |"
            f" bare {ms(self.bare, 50)} {ms(self.bare, 99)} ms | {ratio:5.1f}x | {self.plan}"
        )


async def timed(call: Callable[[int], Awaitable[Any]], samples: int) -> list[float]:
    """Latencies of ``samples`` calls in a row (after a warm-up that is not counted)."""
    for i in range(WARMUP):
        await call(i)
    out = []
    for i in range(samples):
        started = time.perf_counter()
        await call(i)
        out.append(time.perf_counter() - started)
    return out


async def plan_of(con: asyncpg.Connection, sql: str, *args: object) -> str:
    """The scans a statement's plan uses, in order; SEQ SCAN and SORT shout."""
    [doc] = json.loads(await con.fetchval(f"EXPLAIN (FORMAT JSON) {sql}", *args))
    found: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        kind = node["Node Type"]
        if "Scan" in kind or kind == "Sort":
            where = node.get("Index Name") or node.get("Relation Name") or ""
            label = f"{kind} {where}".strip()
            found.append(label.upper() if kind in ("Seq Scan", "Sort") else label)
        for child in node.get("Plans", ()):
            walk(child)

    walk(doc["Plan"])
    return ", ".join(dict.fromkeys(found))


class Reads:
    """The reads to time at one size, for callers picked from what was loaded."""

    def __init__(self, port: int, con: asyncpg.Connection, loaded: Loaded, seed: int) -> None:
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self.stub = player_pb2_grpc.PlayerServiceStub(self.channel)
        self.con = con
        self.loaded = loaded
        self.rng = random.Random(seed)
        now = time.time()
        self._tokens: dict[str, tuple[tuple[str, str]]] = {}
        self._now = now

    def auth(self, player: str) -> tuple[tuple[str, str]]:
        found = self._tokens.get(player)
        if found is None:
            token = issue_token(player, secret=SECRET, ttl_s=3600, now=self._now)
            found = self._tokens[player] = (("authorization", f"Bearer {token}"),)
        return found

    async def close(self) -> None:
        await self.channel.close()

    async def callers(self, sql: str, count: int, *args: object) -> list[asyncpg.Record]:
        """``count`` rows of ``sql`` picked at random (TABLESAMPLE would skew to few pages)."""
        rows = await self.con.fetch(sql, *args)
        return [self.rng.choice(rows) for _ in range(count)] if rows else []

    async def all(self, samples: int) -> list[Figure]:
        figures = [
            await self.profile(samples),
            *await self.games(samples),
            *await self.leaderboard(samples),
            await self.replay(samples),
        ]
        baseline = await self._baseline(samples)
        return [*figures, baseline]

    async def _baseline(self, samples: int) -> Figure:
        players = [f"p-{self.rng.randrange(self.loaded.players):08x}" for _ in range(samples)]
        bare = await timed(lambda i: self.con.fetchval(BASELINE, players[i % samples]), samples)
        plan = await plan_of(self.con, BASELINE, players[0])
        return Figure("(primary key read)", bare, bare, plan)

    async def profile(self, samples: int) -> Figure:
        players = [f"p-{self.rng.randrange(self.loaded.players):08x}" for _ in range(samples)]

        async def rpc(i: int) -> None:
            p = players[i % samples]
            await self.stub.GetProfile(player_pb2.GetProfileRequest(), metadata=self.auth(p))

        got = await timed(rpc, samples)
        bare = await timed(
            lambda i: self.con.fetchrow(player_queries.PROFILE, players[i % samples]), samples
        )
        return Figure(
            "GetProfile", got, bare, await plan_of(self.con, player_queries.PROFILE, players[0])
        )

    async def games(self, samples: int) -> list[Figure]:
        # Any of a player's games (a random depth into their history) ends a page.
        picks = await self.callers(
            "SELECT player_id, finished_at, table_id FROM player_games"
            " WHERE player_id = ANY($1::text[])",
            samples,
            [f"p-{self.rng.randrange(self.loaded.players):08x}" for _ in range(samples)],
        )
        first = [(p["player_id"], *player_queries.NEWEST) for p in picks]
        deep = [(p["player_id"], p["finished_at"], p["table_id"]) for p in picks]
        return [
            await self._games("ListGames first page", first, samples, later=False),
            await self._games("ListGames a later page", deep, samples, later=True),
        ]

    async def _games(
        self, name: str, keys: Sequence[tuple[Any, ...]], samples: int, *, later: bool
    ) -> Figure:
        """ListGames from the keys' places (a later page's token holds its key)."""

        async def rpc(i: int) -> None:
            player, at, table_id = keys[i % len(keys)]
            micros = (at - EPOCH) // MICROSECOND
            token = page_tokens.encode("games", player, micros, str(table_id)) if later else ""
            await self.stub.ListGames(
                player_pb2.ListGamesRequest(page_size=PAGE, page_token=token),
                metadata=self.auth(player),
            )

        async def bare(i: int) -> None:
            player, at, table_id = keys[i % len(keys)]
            await self.con.fetch(player_queries.GAMES, player, at, table_id, PAGE + 1)

        got = await timed(rpc, samples)
        ceiling = await timed(bare, samples)
        plan = await plan_of(self.con, player_queries.GAMES, *keys[0], PAGE + 1)
        return Figure(name, got, ceiling, plan)

    async def leaderboard(self, samples: int) -> list[Figure]:
        ranked = await self.callers(
            "SELECT player_id, rating, rated_games FROM player_standings"
            " WHERE ruleset = 'cafe' AND rated_games > 0",
            samples,
        )
        top_args = ("cafe", float("inf"), 0, "", PAGE + 1)

        async def first(i: int) -> None:
            player = ranked[i % samples]["player_id"]
            await self.stub.GetLeaderboard(
                player_pb2.GetLeaderboardRequest(ruleset="cafe", page_size=PAGE),
                metadata=self.auth(player),
            )

        async def first_bare(i: int) -> None:
            await self.con.fetch(player_queries.TOP, *top_args)
            await self.con.fetchrow(player_queries.RANK, ranked[i % samples]["player_id"], "cafe")

        async def later(i: int) -> None:
            r = ranked[i % samples]
            token = page_tokens.encode(
                "top", "cafe", r["rating"], r["rated_games"], r["player_id"], 1
            )
            await self.stub.GetLeaderboard(
                player_pb2.GetLeaderboardRequest(ruleset="cafe", page_size=PAGE, page_token=token),
                metadata=self.auth(r["player_id"]),
            )

        async def later_bare(i: int) -> None:
            r = ranked[i % samples]
            await self.con.fetch(
                player_queries.TOP, "cafe", r["rating"], r["rated_games"], r["player_id"], PAGE + 1
            )

        rank_plan = await plan_of(self.con, player_queries.RANK, ranked[0]["player_id"], "cafe")
        top_plan = await plan_of(self.con, player_queries.TOP, *top_args)
        return [
            Figure(
                "GetLeaderboard + my rank",
                await timed(first, samples),
                await timed(first_bare, samples),
                f"{top_plan}; rank: {rank_plan}",
            ),
            Figure(
                "GetLeaderboard later page",
                await timed(later, samples),
                await timed(later_bare, samples),
                top_plan,
            ),
        ]

    async def replay(self, samples: int) -> Figure:
        games = self.loaded.replays

        async def rpc(i: int) -> None:
            table_id, player = games[i % len(games)]
            await self.stub.GetReplay(
                player_pb2.GetReplayRequest(table_id=table_id, page_size=EVENTS_PAGE),
                metadata=self.auth(player),
            )

        async def bare(i: int) -> None:
            table_id = games[i % len(games)][0]
            await self.con.fetchrow(replay.HEADER, table_id)
            await self.con.fetch(replay.EVENTS, table_id, 0, EVENTS_PAGE)
            await self.con.fetch(replay.DEALS, table_id, replay.DEAL_KINDS)

        plan = await plan_of(self.con, replay.EVENTS, games[0][0], 0, EVENTS_PAGE)
        return Figure(
            f"GetReplay ({EVENTS_PAGE} events)",
            await timed(rpc, samples),
            await timed(bare, samples),
            plan,
        )
