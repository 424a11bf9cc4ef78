"""What both services' gRPC servers share: options, and the services every
replica serves beside its own (sign-in, health, reflection)."""

from __future__ import annotations

from collections.abc import Sequence

import grpc
from grpc_health.v1 import health, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from services.common.auth_servicer import AuthServicer
from services.common.db import Pool
from services.common.decoding import MAX_REQUEST_BYTES
from services.common.health import HealthMonitor
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc

MAX_RECEIVE_BYTES = 4 * MAX_REQUEST_BYTES
"""The hard cap: gRPC refuses a bigger request unread, with RESOURCE_EXHAUSTED
and no reason. Above `MAX_REQUEST_BYTES` and up to this, the interceptor refuses
it with a reason (REQUEST_TOO_LARGE) without parsing it. A small multiple, so a
call in flight still holds at most 256 KB of request."""

PENDING_CALLS = 10_000
PENDING_CALLS_HARD = 20_000
"""Calls gRPC holds for a replica whose event loop has not taken them up yet.

Past `grpc.server.max_pending_requests` (1,000 by default) gRPC starts turning
new calls away at random, and past the hard limit (3,000) it turns them all
away; the client sees CANCELLED before any handler ran. With the defaults, a
matchmaker replica busy for a second while a thousand players tapped "play"
bounced a third of them, and a replica taking over thousands of Watch streams
from a stopped one would bounce most. These are cheap to hold (a request of a
few hundred bytes each), so a burst waits its turn instead."""

UNTAKEN_CALL_S = 120
"""How long such a call may wait (`grpc.server_max_unrequested_time_in_server`).

gRPC's default, 30 s, ended a quarter of a 10,000-player burst on a slow 2-core
machine with CANCELLED after a 30 s wait, before the replica ever saw them: a
player who tapped "play" waits a little longer instead. A client's own deadline
still ends its call first."""


KEEPALIVE_MS = 60_000
"""How long a connection may stay quiet before the server pings it; one that has
not answered `KEEPALIVE_TIMEOUT_MS` later is closed, with its calls.

A phone that drops off the network without closing its connection would
otherwise keep its streams open for gRPC's default, two hours: a waiting ticket
matched for nobody, a Watch fed into a dead socket."""
KEEPALIVE_TIMEOUT_MS = 20_000
CLIENT_PING_MS = 10_000
"""The most often a client may ping on a quiet connection (apps keep theirs alive
with pings every 10 s or more); gRPC's default would close, after two such pings,
the connection of a client pinging more often than every 5 minutes."""


def server_options(
    *extra: tuple[str, int], keepalive_ms: int = KEEPALIVE_MS, client_ping_ms: int = CLIENT_PING_MS
) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
        ("grpc.server.max_pending_requests", PENDING_CALLS),
        ("grpc.server.max_pending_requests_hard_limit", PENDING_CALLS_HARD),
        ("grpc.server_max_unrequested_time_in_server", UNTAKEN_CALL_S),
        ("grpc.keepalive_time_ms", keepalive_ms),
        ("grpc.keepalive_timeout_ms", min(keepalive_ms, KEEPALIVE_TIMEOUT_MS)),
        ("grpc.http2.ping_timeout_ms", min(keepalive_ms, KEEPALIVE_TIMEOUT_MS)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),  # a quiet stream is pinged on
        ("grpc.http2.min_ping_interval_without_data_ms", client_ping_ms),
        *extra,
    ]


async def serve(
    server: grpc.aio.Server,
    service: str,
    *,
    pool: Pool,
    secret: str,
    health_servicer: health.aio.HealthServicer,
    address: str,
    beside: Sequence[str] = (),
) -> tuple[int, HealthMonitor]:
    """Add sign-in, health and reflection beside ``service`` (the replica's own,
    already added, with the services it serves ``beside`` it: its operators',
    the other services'), bind ``address`` and start. The port bound, and the
    started monitor that reports ``service`` and sign-in healthy while the
    database is."""
    auth_pb2_grpc.add_AuthServiceServicer_to_server(AuthServicer(pool, secret=secret), server)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    monitored = (service, auth_pb2.DESCRIPTOR.services_by_name["AuthService"].full_name)
    names = (*monitored, *beside, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)
    port = server.add_insecure_port(address)
    await server.start()
    monitor = HealthMonitor(health_servicer, pool, monitored)
    try:
        await monitor.start()
    except BaseException:
        await server.stop(0)  # the caller never got the server: it would listen on
        raise
    return port, monitor
