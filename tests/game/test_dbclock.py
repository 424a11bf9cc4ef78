"""The database's clock as a replica estimates it between queries: from the
midpoint of a query's round trip, the tightest recent sample, not back by a few ms,
and none at all without a recent sample."""

from __future__ import annotations

from services.game.dbclock import FRESH_S, MAX_ROUND_TRIP_S, RENEW_S, DbClock


class Ticks:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


DB_MS = 1_800_000_000_000


def test_no_sample_no_estimate() -> None:
    assert DbClock(Ticks()).now_ms() is None


def test_the_estimate_is_the_database_time_at_the_round_trips_midpoint() -> None:
    ticks = Ticks(100.004)
    clock = DbClock(ticks)
    clock.saw(DB_MS, sent=100.000, received=100.004)  # the database read its clock at 100.002
    assert clock.now_ms() == DB_MS + 2
    ticks.now = 101.002
    assert clock.now_ms() == DB_MS + 1000


def test_an_old_sample_gives_no_estimate() -> None:
    ticks = Ticks(100.0)
    clock = DbClock(ticks)
    clock.saw(DB_MS, sent=99.999, received=100.0)
    ticks.now = 100.0 + FRESH_S + 0.001
    assert clock.now_ms() is None


def test_a_recent_tighter_sample_is_kept_over_a_looser_one() -> None:
    ticks = Ticks(100.0)
    clock = DbClock(ticks)
    clock.saw(DB_MS, sent=99.999, received=100.001)  # 2 ms round trip
    # 40 ms round trip soon after: the database's reading could lie anywhere in it.
    clock.saw(DB_MS + 500, sent=100.010, received=100.050)
    ticks.now = 100.050
    assert clock.now_ms() == DB_MS + 50
    # Once the tight sample is old, a looser one is better than none.
    late = 100.0 + RENEW_S + 0.1
    clock.saw(DB_MS + 500, sent=late - 0.040, received=late)
    ticks.now = late
    assert clock.now_ms() == DB_MS + 500 + 20


def test_the_estimate_does_not_run_back_by_a_few_milliseconds() -> None:
    ticks = Ticks(100.0)
    clock = DbClock(ticks)
    clock.saw(DB_MS, sent=99.999, received=100.001)
    ticks.now = 100.010
    first = clock.now_ms()
    assert first == DB_MS + 10
    # A tighter sample says the database is 5 ms behind the estimate.
    clock.saw(DB_MS + 5, sent=100.0095, received=100.0105)
    assert clock.now_ms() == first
    ticks.now = 100.020
    assert clock.now_ms() == DB_MS + 15


def test_the_estimate_follows_the_database_clock_set_back() -> None:
    ticks = Ticks(100.0)
    clock = DbClock(ticks)
    clock.saw(DB_MS, sent=99.999, received=100.001)
    assert clock.now_ms() == DB_MS
    # The database's clock is set back an hour: holding still would stop the
    # table clocks for that hour.
    ticks.now = 100.5
    clock.saw(DB_MS - 3_600_000, sent=100.499, received=100.501)
    assert clock.now_ms() == DB_MS - 3_600_000


def test_a_sample_that_may_have_waited_for_a_lock_is_not_kept() -> None:
    """A compare-and-set that queued behind a lock for 2 s read the clock at its
    end: its midpoint would put the estimate a second ahead."""
    ticks = Ticks(100.0)
    clock = DbClock(ticks)
    clock.saw(DB_MS, sent=99.999, received=100.0)
    ticks.now = 102.5
    waited = 2.0
    assert waited > MAX_ROUND_TRIP_S
    clock.saw(DB_MS + 2_500, sent=100.5, received=100.5 + waited)  # read at the end
    assert clock.now_ms() is None, "only the lock-free sample, now too old"
    clock.saw(DB_MS + 2_500, sent=102.499, received=102.501)
    assert clock.now_ms() == DB_MS + 2_500
