"""The capacity run's fixed settings: the issue's targets and the queue played."""

from __future__ import annotations

from services.common.pb.rummy.v1 import table_pb2

TARGETS = {
    "players_per_core": 10_000,
    "action_p99_ms": 50.0,
    "loop_lag_p99_ms": 20.0,
    "cpu_per_action_ms": 0.6,
}
"""The issue's targets, printed next to each number (never asserted). The two
latencies also end the run: a step past either is past what the server holds."""

SEATS = 4
"""Players per table: the matchmaker seats four to a table."""
RULESET = "cafe"
OPTIONS = table_pb2.TableOptions()
"""The server's defaults (the 45 s turn timer): a human-paced player never meets it."""

LOADER_LAG_MS = 20.0
"""A load process whose own event loop runs this late at p99 delays the calls it
times: past it, the generator and not the server would be the limit."""
SHARED_MATCHMAKER_CHANNELS = 4
"""Per load process: players share these connections to the matchmaker (its cost is
`bench.matchmaker`'s subject); each has its own to the game server."""
MIN_CONNECTED = 0.95
"""A step whose players did not all connect (this share at least) ends the run."""
OPEN_BATCH = 100
"""Bare streams a load process opens at once (each on its own connection)."""
