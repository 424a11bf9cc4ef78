"""Limits that keep one caller from taking more than its share (applied by
the server interceptor, `services.common.interceptors.Gate`).

Two token buckets guard every call: one per connection (the peer address, for
every call including ``AuthService/Login``) and one per signed-in player (the
player id of a valid bearer token, whichever connection it comes from). A call
that finds its bucket empty ends with RESOURCE_EXHAUSTED, reason
``RATE_LIMITED``, and ``retry_after_ms`` in its ErrorInfo metadata: when the
bucket will hold a token again.

Response streams (Watch, Enqueue, the private-table streams) also count
against a per-player ceiling of open streams (reason ``TOO_MANY_STREAMS``),
and against one for the whole replica (reason ``SERVER_FULL``: accounts cost
nothing, so per-player ceilings alone do not bound a replica's memory); a
stream's place is given back when it ends, however it ends.

Memory stays bounded: a bucket that has refilled completely is the same as a
new one, so idle buckets are dropped, and the number of buckets is capped
(the least recently used go first).

Verified service credentials (the matchmaker creating tables) and the health
and reflection services are not limited. Limits are checked before the token
is judged, so floods of bad tokens are limited too.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from services.common import errors
from services.common.config import Env
from services.common.wire.reasons import ServiceReason

FULL_RETRY_MS = 5_000
"""What a stream turned away from a full replica is told to wait (another
replica, or a place given back here, may take it by then)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Rates are calls per second (0: no limit), bursts the bucket sizes."""

    player_rate: float = 50.0
    player_burst: int = 100
    peer_rate: float = 200.0
    peer_burst: int = 400
    streams_per_player: int = 8
    """Open response streams per player (0: no limit)."""
    streams_per_replica: int = 10_000
    """Open response streams of all players together (0: no limit). An idle
    stream holds about 24 KB: 10,000 fit a game pod's 512 MiB memory limit."""
    max_buckets: int = 100_000
    """Per kind (players, peers); beyond it the least recently used are dropped."""

    @classmethod
    def from_env(cls, env: Env) -> Limits:
        player_rate, player_burst = env.rate("RUMMY_RATE_PER_PLAYER")
        peer_rate, peer_burst = env.rate("RUMMY_RATE_PER_PEER")
        return cls(
            player_rate=player_rate,
            player_burst=player_burst,
            peer_rate=peer_rate,
            peer_burst=peer_burst,
            streams_per_player=env.integer("RUMMY_STREAMS_PER_PLAYER", high=10_000),
            streams_per_replica=env.integer("RUMMY_STREAMS_PER_REPLICA", high=10_000_000),
        )


class _Bucket:
    __slots__ = ("stamp", "tokens")

    def __init__(self, tokens: float, stamp: float) -> None:
        self.tokens = tokens
        self.stamp = stamp


class Buckets:
    """Token buckets by key, with idle ones evicted; see the module docstring."""

    def __init__(self, rate: float, burst: int, *, max_buckets: int = 100_000) -> None:
        self.rate = rate
        self.burst = max(1, burst)
        self.max_buckets = max(1, max_buckets)
        self._full_after = self.burst / rate if rate > 0 else 0.0
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, key: str, now: float) -> float:
        """Spend one token of ``key``'s bucket: 0.0 if granted, else seconds to wait."""
        if self.rate <= 0:
            return 0.0
        self._evict(now)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(self.burst), now)
        else:
            self._buckets.move_to_end(key)
            elapsed = max(0.0, now - bucket.stamp)
            bucket.tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate)
            bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate

    def _evict(self, now: float) -> None:
        # Least recently used first: stop at the first bucket still refilling.
        while self._buckets:
            key, oldest = next(iter(self._buckets.items()))
            if now - oldest.stamp < self._full_after and len(self._buckets) < self.max_buckets:
                break
            del self._buckets[key]


class StreamCounts:
    """Open streams by player, and in all; a player with none has no entry."""

    def __init__(self, ceiling: int, total_ceiling: int = 0) -> None:
        self.ceiling = ceiling
        self.total_ceiling = total_ceiling
        self.total = 0
        self._open: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._open)

    def open(self, player: str) -> str | None:
        """Count one more stream of ``player``; else the reason it may not open."""
        if self.total_ceiling > 0 and self.total >= self.total_ceiling:
            return ServiceReason.SERVER_FULL
        count = self._open.get(player, 0)
        if self.ceiling > 0 and count >= self.ceiling:
            return ServiceReason.TOO_MANY_STREAMS
        self._open[player] = count + 1
        self.total += 1
        return None

    def close(self, player: str) -> None:
        count = self._open.get(player, 0) - 1
        if count >= 0:
            self.total -= 1
        if count > 0:
            self._open[player] = count
        else:
            self._open.pop(player, None)

    def count(self, player: str) -> int:
        return self._open.get(player, 0)


class Quotas:
    """One server's buckets and open-stream counts."""

    def __init__(self, limits: Limits, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self.players = Buckets(
            limits.player_rate, limits.player_burst, max_buckets=limits.max_buckets
        )
        self.peers = Buckets(limits.peer_rate, limits.peer_burst, max_buckets=limits.max_buckets)
        self.streams = StreamCounts(limits.streams_per_player, limits.streams_per_replica)

    async def admit(self, context: grpc.aio.ServicerContext[Any, Any], player: str | None) -> None:
        """Charge the connection's bucket, then the player's; abort if one is empty."""
        now = self._clock()
        wait = self.peers.take(context.peer() or "", now)
        if not wait and player is not None:
            wait = self.players.take(player, now)
        if wait:
            retry_ms = max(1, math.ceil(wait * 1000))
            await errors.abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                ServiceReason.RATE_LIMITED,
                "You are going too fast. Please wait a moment and try again.",
                metadata={"retry_after_ms": str(retry_ms)},
            )

    async def open_stream(self, context: grpc.aio.ServicerContext[Any, Any], player: str) -> None:
        """Count one more open stream of ``player``, or abort; `close_stream` gives it back."""
        refused = self.streams.open(player)
        if refused == ServiceReason.TOO_MANY_STREAMS:
            await errors.abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                ServiceReason.TOO_MANY_STREAMS,
                "You have too many live connections open. Close one and try again.",
                metadata={"limit": str(self.streams.ceiling)},
            )
        if refused == ServiceReason.SERVER_FULL:
            await errors.abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                ServiceReason.SERVER_FULL,
                "The game is very busy right now. Please try again in a few seconds.",
                metadata={"retry_after_ms": str(FULL_RETRY_MS)},
            )

    def close_stream(self, player: str) -> None:
        self.streams.close(player)
