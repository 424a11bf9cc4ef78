"""The database's clock as this replica last saw it, to time a move without asking.

Tables run on the database's clock, so that every replica and the sweeper agree
on when a turn is due. A move this replica judges from a state it knows needs
the time before its one round trip (the compare-and-set), so it takes the time
from here: the local monotonic clock plus the offset the last queries showed.
Each query that reads the database's clock is a sample; the error is at most
half its round trip, a millisecond or so. The estimate does not run back by
a few milliseconds when a tighter sample comes in, and with no recent sample
there is none: the move then reads the clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

FRESH_S = 2.0
"""A sample older than this says nothing: the move reads the database's clock."""
MAX_ROUND_TRIP_S = 0.1
"""A slower sample is not kept: its statement may have waited for a lock before it
read the clock, so the midpoint could be off by up to the whole round trip."""
RENEW_S = 0.25
"""A sample with a longer round trip than the kept one replaces it only after this long."""
HOLD_MS = 1000
"""The estimate holds still rather than run back by less than this (a tighter
sample, a slewing clock); a longer step back is the database's clock set back,
and the estimate follows it."""


class DbClock:
    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self._monotonic = monotonic
        self._offset_ms = 0.0
        self._at = -float("inf")
        self._round_trip = float("inf")
        self._last_ms = 0

    def saw(self, db_ms: int, sent: float, received: float) -> None:
        """A query sent at ``sent`` and answered at ``received`` (monotonic seconds)
        read the database's clock as ``db_ms``."""
        round_trip = received - sent
        if round_trip > MAX_ROUND_TRIP_S:
            return
        if round_trip > self._round_trip and received - self._at < RENEW_S:
            return  # the kept sample is recent and tighter
        self._offset_ms = db_ms - (sent + received) * 500
        self._at = received
        self._round_trip = round_trip

    def now_ms(self) -> int | None:
        """The database's time now (ms since the epoch), or None without a recent sample."""
        now = self._monotonic()
        if now - self._at > FRESH_S:
            return None
        estimate = int(now * 1000 + self._offset_ms)
        if estimate > self._last_ms or estimate < self._last_ms - HOLD_MS:
            self._last_ms = estimate
        return self._last_ms
