"""What the soak run's pieces share: where the code is, the token secret, and how
long a server may take to stop."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SECRET = "soak-secret-that-is-long-enough-for-hs256-tokens"
STOP_TIMEOUT_S = 30.0
"""A server still running this long after SIGTERM gets SIGKILL."""
