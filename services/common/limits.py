"""Server interceptor that keeps one caller from taking more than its share.

Two token buckets guard every call: one per connection (the peer address, for
every call including ``AuthService/Login``) and one per signed-in player (the
player id of a valid bearer token, whichever connection it comes from). A call
that finds its bucket empty ends with RESOURCE_EXHAUSTED, reason
``RATE_LIMITED``, and ``retry_after_ms`` in its ErrorInfo metadata: when the
bucket will hold a token again.

Response streams (Watch, Enqueue, the private-table streams) also count
against a per-player ceiling of open streams (reason ``TOO_MANY_STREAMS``); a
stream's place is given back when it ends, however it ends.

Memory stays bounded: a bucket that has refilled completely is the same as a
new one, so idle buckets are dropped, and the number of buckets is capped
(the least recently used go first).

Verified service credentials (the matchmaker creating tables) and the health
and reflection services are not limited. A request that does not decode is
refused with INVALID_ARGUMENT, reason ``MALFORMED_REQUEST`` (gRPC alone would
answer UNKNOWN). This interceptor sits after the
observe interceptor, so refusals are counted, and before the auth interceptor,
so floods of bad tokens are limited too; it checks tokens itself only to learn
whose bucket to charge.
"""

from __future__ import annotations

import inspect
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from services.common import errors
from services.common.auth import TokenError, verify_token
from services.common.config import Env
from services.common.interceptors import PUBLIC_SERVICES, bearer_token

RATE_LIMITED = "RATE_LIMITED"
TOO_MANY_STREAMS = "TOO_MANY_STREAMS"
MALFORMED_REQUEST = "MALFORMED_REQUEST"


@dataclass(frozen=True, slots=True)
class Limits:
    """Rates are calls per second (0: no limit), bursts the bucket sizes."""

    player_rate: float = 50.0
    player_burst: int = 100
    peer_rate: float = 200.0
    peer_burst: int = 400
    streams_per_player: int = 8
    """Open response streams per player (0: no limit)."""
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
    """Open streams by player; a player with none has no entry."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self._open: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._open)

    def open(self, player: str) -> bool:
        count = self._open.get(player, 0)
        if self.ceiling > 0 and count >= self.ceiling:
            return False
        self._open[player] = count + 1
        return True

    def close(self, player: str) -> None:
        count = self._open.get(player, 0) - 1
        if count > 0:
            self._open[player] = count
        else:
            self._open.pop(player, None)

    def count(self, player: str) -> int:
        return self._open.get(player, 0)


def _exempt(method: str) -> bool:
    return method.lstrip("/").partition("/")[0] in PUBLIC_SERVICES


# grpcio ships no type hints, so its base class is `Any` to mypy.
class LimitInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Rate and stream limits; see the module docstring."""

    def __init__(
        self,
        limits: Limits,
        *,
        secret: str,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = limits
        self._secret = secret
        self._clock = clock
        self._wall = wall_clock
        self.players = Buckets(
            limits.player_rate, limits.player_burst, max_buckets=limits.max_buckets
        )
        self.peers = Buckets(limits.peer_rate, limits.peer_burst, max_buckets=limits.max_buckets)
        self.streams = StreamCounts(limits.streams_per_player)

    def _caller(self, details: grpc.HandlerCallDetails) -> tuple[str | None, bool]:
        """(player id or None, whether a verified service calls)."""
        try:
            token = bearer_token(details.invocation_metadata)
            if not token:
                return None, False
            claims = verify_token(token, secret=self._secret, now=self._wall())
        except (TokenError, UnicodeDecodeError):
            return None, False
        if claims.is_service:
            return None, True
        return claims.subject, False

    async def _admit(self, context: grpc.aio.ServicerContext, player: str | None) -> None:
        now = self._clock()
        wait = self.peers.take(context.peer() or "", now)
        if not wait and player is not None:
            wait = self.players.take(player, now)
        if wait:
            retry_ms = max(1, math.ceil(wait * 1000))
            await errors.abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                RATE_LIMITED,
                "You are going too fast. Please wait a moment and try again.",
                metadata={"retry_after_ms": str(retry_ms)},
            )

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or _exempt(details.method):
            return handler
        player, service = self._caller(details)
        decode = _tolerant(handler.request_deserializer)
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, player, limited=not service),
                request_deserializer=decode,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(handler.unary_stream, player, limited=not service),
                request_deserializer=decode,
                response_serializer=handler.response_serializer,
            )
        # No client-streaming RPC in our services; leave any other kind alone.
        return handler

    async def _check(
        self, request: Any, context: grpc.aio.ServicerContext, player: str | None, limited: bool
    ) -> None:
        if limited:
            await self._admit(context, player)
        if request is _MALFORMED:
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                MALFORMED_REQUEST,
                "The request could not be read. Please update the app.",
            )

    def _unary(
        self, behavior: Callable[..., Any], player: str | None, *, limited: bool
    ) -> Callable[..., Any]:
        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await self._check(request, context, player, limited)
            result = behavior(request, context)
            return await result if inspect.isawaitable(result) else result

        return call

    def _stream(
        self, behavior: Callable[..., Any], player: str | None, *, limited: bool
    ) -> Callable[..., Any]:
        if not inspect.isasyncgenfunction(behavior):
            # A refusal (the auth interceptor's) or a handler writing with context.write.
            return self._unary(behavior, player, limited=limited)

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            await self._check(request, context, player, limited)
            if player is None or not limited:
                async for item in behavior(request, context):
                    yield item
                return
            if not self.streams.open(player):
                await errors.abort(
                    context,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    TOO_MANY_STREAMS,
                    "You have too many live connections open. Close one and try again.",
                    metadata={"limit": str(self.streams.ceiling)},
                )
            try:
                async for item in behavior(request, context):
                    yield item
            finally:
                self.streams.close(player)

        return stream


_MALFORMED = object()
"""What an undecodable request becomes, so it is refused as INVALID_ARGUMENT
rather than failing inside gRPC with UNKNOWN."""


def _tolerant(decode: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if decode is None:
        return None

    def tolerant(data: bytes) -> Any:
        try:
            return decode(data)
        except DecodeError:
            return _MALFORMED

    return tolerant
