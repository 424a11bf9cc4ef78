"""`matching.form_tables`: who sits with whom, as a pure function of the queue and the clock."""

from __future__ import annotations

import random
from collections.abc import Sequence

from services.common.rating import DEFAULT_DEVIATION, SETTLED_DEVIATION
from services.matchmaker.matching import (
    RATING_WIDENING,
    RATING_WINDOW,
    WINDOW_DEVIATIONS,
    Group,
    Waiting,
    form_tables,
)

FIFO = "cafe|fifo|{}"
OTHER = "rami51|fifo|{}"
RATED = "cafe|rating|{}"


def ticket(
    n: int,
    *,
    size: int = 2,
    family: str = FIFO,
    at: int | None = None,
    rating: float = 1500.0,
    deviation: float = 0.0,
    smaller: int = 0,
    bots: int = 0,
    private: bool = False,
    host: bool = False,
) -> Waiting:
    """Ticket ``t<n>``, queued at ``at`` ms (default: ``n`` ms)."""
    return Waiting(
        ticket_id=f"t{n}",
        player_id=f"p{n}",
        family=family,
        table_size=size,
        created_ms=n if at is None else at,
        rating=rating,
        by_rating="|rating|" in family,
        accept_smaller_ms=smaller,
        fill_bots_ms=bots,
        private=private,
        is_host=host,
        deviation=deviation,
    )


def seats(groups: Sequence[Group]) -> list[tuple[str, ...]]:
    return [tuple(t.ticket_id for t in g.tickets) for g in groups]


# --- FIFO -------------------------------------------------------------------


def test_fifo_seats_the_oldest_first_in_arrival_order() -> None:
    queue = [ticket(n) for n in range(5)]
    random.Random(7).shuffle(queue)
    groups = form_tables(queue, now_ms=10)
    assert seats(groups) == [("t0", "t1"), ("t2", "t3")]
    assert all(g.size == 2 and g.bots == 0 for g in groups)


def test_fifo_breaks_ties_on_the_same_millisecond_by_ticket_id() -> None:
    queue = [ticket(n, at=0) for n in (3, 1, 2, 0)]
    assert seats(form_tables(queue, now_ms=0)) == [("t0", "t1"), ("t2", "t3")]


def test_each_size_fills_its_own_tables() -> None:
    queue = [ticket(0, size=3), ticket(1, size=2), ticket(2, size=3), ticket(3, size=4)]
    queue += [ticket(4, size=2), ticket(5, size=3), ticket(6, size=4), ticket(7, size=4)]
    groups = form_tables(queue, now_ms=100)
    assert seats(groups) == [("t0", "t2", "t5"), ("t1", "t4")]
    assert [g.size for g in groups] == [3, 2]


def test_a_lone_ticket_waits() -> None:
    assert form_tables([ticket(0, size=4), ticket(1, size=3), ticket(2, size=2)], 60_000) == []


# --- families -------------------------------------------------------------------


def test_families_never_mix() -> None:
    queue = [ticket(0, family=FIFO), ticket(1, family=OTHER), ticket(2, family=RATED)]
    assert form_tables(queue, now_ms=10) == []
    queue += [ticket(3, family=OTHER), ticket(4, family=FIFO), ticket(5, family=RATED)]
    groups = form_tables(queue, now_ms=10)
    assert sorted(seats(groups)) == [("t0", "t4"), ("t1", "t3"), ("t2", "t5")]
    for g in groups:
        assert len({t.family for t in g.tickets}) == 1


def test_private_and_public_tickets_never_mix() -> None:
    queue = [
        ticket(0, family="invite:ABCDEF", private=True, host=True),
        ticket(1, family=FIFO),
    ]
    assert form_tables(queue, now_ms=10) == []


# --- rating window ----------------------------------------------------------


def test_close_ratings_match_at_once() -> None:
    queue = [ticket(0, family=RATED, rating=1500), ticket(1, family=RATED, rating=1590)]
    assert seats(form_tables(queue, now_ms=1)) == [("t0", "t1")]


def test_far_ratings_match_once_the_window_has_widened() -> None:
    queue = [ticket(0, family=RATED, rating=1000), ticket(1, family=RATED, rating=2000)]
    # The window reaches the 1000-point gap after (1000 - 100) / 25 = 36 s of waiting.
    needed_ms = int((1000 - RATING_WINDOW) / RATING_WIDENING * 1000)
    for now in (0, 1_000, 10_000, needed_ms - 1_000):
        assert form_tables(queue, now_ms=now) == [], now
    assert seats(form_tables(queue, now_ms=needed_ms)) == [("t0", "t1")]
    assert seats(form_tables(queue, now_ms=needed_ms + 60_000)) == [("t0", "t1")]


def test_the_more_patient_tickets_window_decides() -> None:
    # t0 waited long enough for a 600-point gap; t1 just arrived.
    queue = [ticket(0, family=RATED, rating=1000, at=0), ticket(1, family=RATED, rating=1600)]
    now = int((600 - RATING_WINDOW) / RATING_WIDENING * 1000)
    queue[1] = ticket(1, family=RATED, rating=1600, at=now)
    assert seats(form_tables(queue, now_ms=now)) == [("t0", "t1")]


def test_a_far_rated_ticket_does_not_block_the_queue() -> None:
    queue = [
        ticket(0, family=RATED, rating=2400),
        ticket(1, family=RATED, rating=1500),
        ticket(2, family=RATED, rating=1520),
    ]
    assert seats(form_tables(queue, now_ms=5)) == [("t1", "t2")]


def test_every_player_at_a_rated_table_is_close_to_every_other() -> None:
    # t1 and t2 are each within 100 points of t0, but 200 apart: not together.
    queue = [
        ticket(0, family=RATED, rating=1500, size=3),
        ticket(1, family=RATED, rating=1400, size=3),
        ticket(2, family=RATED, rating=1600, size=3),
        ticket(3, family=RATED, rating=1450, size=3),
    ]
    assert seats(form_tables(queue, now_ms=5)) == [("t0", "t1", "t3")]


def test_an_unsure_rating_is_matched_more_widely() -> None:
    """A newcomer's window spans two deviations (about 490 points) at once; a
    settled rating's the plain `RATING_WINDOW`, whatever its small deviation."""
    newcomer = ticket(0, family=RATED, rating=1500, deviation=DEFAULT_DEVIATION)
    settled = ticket(0, family=RATED, rating=1500, deviation=SETTLED_DEVIATION)
    assert newcomer.window(0) == WINDOW_DEVIATIONS * DEFAULT_DEVIATION > 450
    assert settled.window(0) == RATING_WINDOW
    assert newcomer.window(10_000) - newcomer.window(0) == 10 * RATING_WIDENING
    far = ticket(1, family=RATED, rating=1850, deviation=SETTLED_DEVIATION)
    assert seats(form_tables([newcomer, far], now_ms=1)) == [("t0", "t1")]
    assert form_tables([settled, far], now_ms=1) == []


def test_the_window_narrows_as_the_deviation_shrinks() -> None:
    deviations = [DEFAULT_DEVIATION * k / 20 for k in range(20, -1, -1)]
    windows = [ticket(0, family=RATED, deviation=d).window(5_000) for d in deviations]
    assert windows == sorted(windows, reverse=True)
    assert windows[0] > windows[-1] == RATING_WINDOW + 5 * RATING_WIDENING


def test_fifo_queues_ignore_ratings() -> None:
    queue = [ticket(0, rating=100), ticket(1, rating=3000)]
    assert seats(form_tables(queue, now_ms=0)) == [("t0", "t1")]


# --- accepting a smaller table ------------------------------------------------


def test_fours_accept_a_table_of_three_after_their_wait() -> None:
    queue = [ticket(n, size=4, smaller=10_000) for n in range(3)]
    assert form_tables(queue, now_ms=9_999) == []
    groups = form_tables(queue, now_ms=10_002)
    assert seats(groups) == [("t0", "t1", "t2")]
    assert groups[0].size == 3 and groups[0].bots == 0


def test_the_preferred_size_wins_when_it_is_available() -> None:
    queue = [ticket(n, size=4, smaller=1_000) for n in range(5)]
    groups = form_tables(queue, now_ms=60_000)
    assert [g.size for g in groups] == [4]
    assert seats(groups) == [("t0", "t1", "t2", "t3")]


def test_a_patient_four_joins_a_three_player_queue() -> None:
    queue = [ticket(0, size=4, smaller=5_000), ticket(1, size=3), ticket(2, size=3)]
    assert form_tables(queue, now_ms=4_000) == []
    groups = form_tables(queue, now_ms=5_000)
    assert seats(groups) == [("t0", "t1", "t2")] and groups[0].size == 3


def test_without_accept_smaller_a_four_never_sits_at_three() -> None:
    queue = [ticket(0, size=4), ticket(1, size=3), ticket(2, size=3)]
    assert form_tables(queue, now_ms=3_600_000) == []


def test_accept_smaller_goes_down_to_two_but_never_below() -> None:
    queue = [ticket(0, size=4, smaller=1), ticket(1, size=2)]
    groups = form_tables(queue, now_ms=100)
    assert seats(groups) == [("t0", "t1")] and groups[0].size == 2
    assert form_tables([ticket(0, size=4, smaller=1)], now_ms=10**9) == []


# --- bots ------------------------------------------------------------------------


def test_bots_fill_the_empty_seats_after_the_wait() -> None:
    lone = [ticket(0, size=4, bots=5_000)]
    assert form_tables(lone, now_ms=4_999) == []
    groups = form_tables(lone, now_ms=5_000)
    assert seats(groups) == [("t0",)]
    assert groups[0].size == 4 and groups[0].bots == 3


def test_bots_sit_only_with_humans_who_asked_for_them() -> None:
    # t3 asked for bots later than now: company sooner is no worse. t1 never asked.
    queue = [
        ticket(0, size=4, bots=5_000),
        ticket(1, size=4),
        ticket(2, size=3, bots=1_000),
        ticket(3, size=4, bots=60_000, at=10),
    ]
    groups = form_tables(queue, now_ms=6_000)
    assert seats(groups) == [("t0", "t3"), ("t2",)]
    assert [(g.size, g.bots) for g in groups] == [(4, 2), (3, 2)]


def test_no_bots_for_tickets_that_did_not_ask() -> None:
    assert form_tables([ticket(0, size=2)], now_ms=3_600_000) == []


# --- private tables ------------------------------------------------------------


def private(
    n: int,
    *,
    size: int = 3,
    host: bool = False,
    bots: int = 0,
    at: int | None = None,
    code: str = "ABCDEF",
) -> Waiting:
    return ticket(n, size=size, family=f"invite:{code}", private=True, host=host, bots=bots, at=at)


def test_a_private_table_starts_only_when_full() -> None:
    queue = [private(0, host=True), private(1)]
    assert form_tables(queue, now_ms=3_600_000) == []
    queue.append(private(2))
    groups = form_tables(queue, now_ms=10)
    assert seats(groups) == [("t0", "t1", "t2")]
    assert groups[0].size == 3 and groups[0].bots == 0


def test_the_host_takes_seat_zero_and_extra_guests_wait() -> None:
    # The host and a guest queued in the same millisecond, the guest's id sorting first.
    queue = [private(5, size=2, host=True, at=0), private(1, size=2, at=0), private(2, size=2)]
    groups = form_tables(queue, now_ms=10)
    assert seats(groups) == [("t5", "t1")]


def test_a_private_table_never_starts_without_its_host() -> None:
    queue = [private(1), private(2), private(3)]
    assert form_tables(queue, now_ms=3_600_000) == []


def test_a_private_table_starts_with_bots_after_the_hosts_wait() -> None:
    queue = [private(0, size=4, host=True, bots=8_000), private(1, size=4)]
    assert form_tables(queue, now_ms=7_999) == []
    groups = form_tables(queue, now_ms=8_000)
    assert seats(groups) == [("t0", "t1")]
    assert groups[0].size == 4 and groups[0].bots == 2


def test_private_tables_with_different_codes_stay_apart() -> None:
    queue = [
        private(0, size=2, host=True, code="AAAAAA"),
        private(1, size=2, host=True, code="BBBBBB"),
    ]
    assert form_tables(queue, now_ms=10) == []


def test_private_tickets_never_accept_a_smaller_table() -> None:
    guest = Waiting("t1", "p1", "invite:X", 3, 1, accept_smaller_ms=1, private=True)
    queue = [private(0, host=True, code="X"), guest]
    assert form_tables(queue, now_ms=60_000) == []
