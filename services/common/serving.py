"""gRPC server options both services share."""

from __future__ import annotations

MAX_MESSAGE_BYTES = 64 * 1024
"""No request of ours comes near this; anything bigger is refused unread."""

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


def server_options(*extra: tuple[str, int]) -> list[tuple[str, int]]:
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.server.max_pending_requests", PENDING_CALLS),
        ("grpc.server.max_pending_requests_hard_limit", PENDING_CALLS_HARD),
        ("grpc.server_max_unrequested_time_in_server", UNTAKEN_CALL_S),
        *extra,
    ]
