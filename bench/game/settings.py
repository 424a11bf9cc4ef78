"""What every phase of the game benchmark shares: the targets, the token
secret, table sizes and the servers' limits."""

from __future__ import annotations

from services.common.limits import Limits

TARGETS = {
    "ceiling_ratio": 0.50,
    "half_load_p99_ms": 25.0,
    "timeout_late_p99_ms": 250.0,
    "stream_memory_ratio": 1.25,
    "cpu_per_action_ms": 0.6,
}
"""The issue's targets, printed next to each number (never asserted)."""

SECRET = "bench-secret-that-is-long-enough-for-hs256"
LONG_TIMER_MS = 3_600_000
"""Turn timer of the played tables: nothing times out while bots play them."""
SEATS = 4
BARE_SERVICE = "bench.Bare"
BARE_MESSAGE = b"\x08\x01" * 32
"""What the bare server's streams send: about the size of a table event."""
STREAM_COUNTS = (1_000, 10_000)

UNLIMITED = Limits(player_rate=0, peer_rate=0, streams_per_player=0, streams_per_replica=0)
"""The load comes from a few processes, not from players: no per-peer limit."""
