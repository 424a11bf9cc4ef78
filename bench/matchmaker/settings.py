"""The run's fixed settings, shared by the servers, the ceilings and the phases."""

from __future__ import annotations

from services.common.limits import Limits
from services.common.pb.rummy.v1 import table_pb2

TARGETS = {"matched_per_s": 1_000.0, "p99_s": 2.0, "burst_p99_s": 5.0, "cpu_per_ticket_ms": 0.5}
"""The issue's targets, printed next to each number (never asserted)."""
BURST_PLAYERS = 10_000
"""The burst target is for this many players at once."""

SECRET = "bench-secret-that-is-long-enough-for-hs256"
BARE_HOLD_S = 0.5
"""How long the bare server's streams wait between the ticket and the match."""
BARE_STREAMS = 6_000
"""Streams of the bare-server ceiling."""
REPLICAS = 2
PHASE_TIMEOUT_S = 180.0
"""No phase may take longer: a stuck service ends the run instead of hanging it."""

UNLIMITED = Limits(player_rate=0, peer_rate=0, streams_per_player=0, streams_per_replica=0)
"""The load comes from a few processes, not from players: no per-peer limit."""
OPTIONS = table_pb2.TableOptions(turn_timer_ms=3_600_000)
"""Nobody plays the tables the run creates: with the 45 s default their turns would
time out while later phases run, and the game service's sweeper would compete with
the matchmaker for the same cores."""
