"""`matching.form_tables`: who sits with whom, as a pure function of the queue and the clock."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from services.matchmaker.matching import (
    RATING_WIDENING,
    RATING_WINDOW,
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


# --- properties ---------------------------------------------------------------

PUBLIC_FAMILIES = (FIFO, OTHER, RATED)


@st.composite
def queues(draw: st.DrawFn) -> tuple[list[Waiting], int]:
    now = draw(st.integers(0, 120_000))
    waiting: list[Waiting] = []
    n = 0
    for _ in range(draw(st.integers(0, 30))):
        family = draw(st.sampled_from(PUBLIC_FAMILIES))
        waiting.append(
            ticket(
                n,
                size=draw(st.integers(2, 4)),
                family=family,
                at=draw(st.integers(0, now)),
                rating=draw(st.floats(800, 2400)),
                smaller=draw(st.sampled_from([0, 0, 1, 5_000, 30_000])),
                bots=draw(st.sampled_from([0, 0, 0, 1, 10_000, 60_000])),
            )
        )
        n += 1
    for code in ("AAAAAA", "BBBBBB")[: draw(st.integers(0, 2))]:
        size = draw(st.integers(2, 4))
        host_at = draw(st.integers(0, now))
        waiting.append(
            private(
                n,
                size=size,
                host=True,
                code=code,
                at=host_at,
                bots=draw(st.sampled_from([0, 1, 30_000])),
            )
        )
        n += 1
        for _ in range(draw(st.integers(0, 4))):
            waiting.append(private(n, size=size, code=code, at=draw(st.integers(host_at, now))))
            n += 1
    return waiting, now


def order(t: Waiting) -> tuple[int, str]:
    return (t.created_ms, t.ticket_id)


@settings(max_examples=200, deadline=None)
@given(queues())
def test_every_group_is_well_formed(case: tuple[list[Waiting], int]) -> None:
    waiting, now = case
    groups = form_tables(waiting, now)
    seated = [t.ticket_id for g in groups for t in g.tickets]
    assert len(seated) == len(set(seated)), "a ticket sits at two tables"
    assert set(seated) <= {t.ticket_id for t in waiting}
    for g in groups:
        anchor = g.tickets[0]
        assert 2 <= g.size <= 4
        assert len(g.tickets) + g.bots == g.size
        assert g.bots >= 0 and g.tickets
        assert len({t.family for t in g.tickets}) == 1, "families mixed"
        assert len({t.player_id for t in g.tickets}) == len(g.tickets)
        if anchor.private:
            assert anchor.is_host and g.size == anchor.table_size
            assert all(t.table_size == g.size for t in g.tickets)
            assert g.bots == 0 or anchor.wants_bots(now)
            continue
        for t in g.tickets:
            assert g.size in t.sizes(now), "a ticket sits at a size it does not accept"
            for other in g.tickets:
                assert not t.by_rating or abs(t.rating - other.rating) <= max(
                    t.window(now), other.window(now)
                ), "two players too far apart in rating"
        if g.bots:
            assert anchor.wants_bots(now) and g.size == anchor.table_size
            assert all(t.fill_bots_ms for t in g.tickets), "bots for someone who did not ask"
        # Seat order is queue order, the anchor first.
        assert list(g.tickets) == sorted(g.tickets, key=order)


@settings(max_examples=200, deadline=None)
@given(queues())
def test_fifo_skips_nobody_who_could_sit_with_an_older_ticket(
    case: tuple[list[Waiting], int],
) -> None:
    waiting, now = case
    groups = form_tables(waiting, now)
    seated = {t.ticket_id for g in groups for t in g.tickets}
    left = [t for t in waiting if t.ticket_id not in seated and not t.by_rating and not t.private]
    for g in groups:
        anchor = g.tickets[0]
        if anchor.by_rating or anchor.private:
            continue
        youngest = max(order(t) for t in g.tickets)
        for t in left:
            if t.family != anchor.family or g.size not in t.sizes(now):
                continue
            if g.bots and not t.fill_bots_ms:
                continue  # bots only sit with players who asked for them
            if order(t) < order(anchor):
                # An older ticket that fits would have been seated first, unless this
                # table only formed because its anchor called in bots.
                assert g.bots, (t, g)
            else:
                # A newer one was skipped if it arrived before one of the players,
                # or while a bot took a seat it could have had.
                assert not (order(t) < youngest or g.bots), (t, g)
    # The oldest ticket of each FIFO family: seated whenever a table it fits formed.
    for family in {t.family for t in waiting if not t.by_rating and not t.private}:
        members = sorted((t for t in waiting if t.family == family), key=order)
        oldest = members[0]
        if oldest.ticket_id in seated:
            continue
        fitting = [
            g for g in groups if g.tickets[0].family == family and g.size in oldest.sizes(now)
        ]
        assert all(g.bots for g in fitting), (oldest, fitting)


@settings(max_examples=100, deadline=None)
@given(queues(), st.randoms(use_true_random=False))
def test_the_outcome_does_not_depend_on_input_order(
    case: tuple[list[Waiting], int], rng: random.Random
) -> None:
    waiting, now = case
    shuffled = list(waiting)
    rng.shuffle(shuffled)
    assert form_tables(shuffled, now) == form_tables(waiting, now)


@settings(max_examples=100, deadline=None)
@given(queues())
def test_a_long_enough_wait_seats_every_rated_pair(case: tuple[list[Waiting], int]) -> None:
    waiting, _ = case
    rated = [
        t
        for t in waiting
        if t.by_rating and t.table_size == 2 and not t.accept_smaller_ms and not t.fill_bots_ms
    ]
    # Rating gaps here are below 1,600 points: an hour closes any of them.
    groups = form_tables(rated, now_ms=3_600_000)
    assert len([t for g in groups for t in g.tickets]) == len(rated) // 2 * 2


# --- the seating rule in its plainest form ----------------------------------


def plainly_seated(waiting: Sequence[Waiting], now: int) -> list[Group]:
    """The rule `form_tables` implements, written for reading rather than speed
    (quadratic in the queue): oldest first, each free ticket anchors a table
    with the oldest later free tickets that fit it, at the first size it takes
    that they fill, or with bots once it asked for them; else it waits."""
    groups: list[Group] = []
    for family in dict.fromkeys(t.family for t in sorted(waiting, key=order)):
        free = sorted((t for t in waiting if t.family == family), key=order)
        i = 0
        while i < len(free):
            anchor, rest = free[i], free[i + 1 :]
            group = None
            if anchor.private:
                group = _private_reference(anchor, rest, now)
            else:
                for size in sizes_taken(anchor, now):
                    fits = fitting(anchor, rest, size, now)
                    if len(fits) >= size - 1:
                        group = Group(size, (anchor, *fits[: size - 1]))
                        break
                if group is None and anchor.wants_bots(now):
                    size = anchor.table_size
                    fits = fitting(anchor, rest, size, now, bots=True)
                    group = Group(
                        size, (anchor, *fits[: size - 1]), bots=size - len(fits[: size - 1]) - 1
                    )
            if group is None:
                i += 1
                continue
            groups.append(group)
            free = [t for t in free if t not in group.tickets]
    return groups


def fitting(
    anchor: Waiting, rest: list[Waiting], size: int, now: int, *, bots: bool = False
) -> list[Waiting]:
    """The later tickets, oldest first, that take ``size`` and are close to the
    anchor and to every one taken before them; at a bot table, only those who
    asked for bots."""
    found: list[Waiting] = []
    for t in rest:
        if bots and not t.fill_bots_ms:
            continue
        if size in sizes_taken(t, now) and all(close(m, t, now) for m in (anchor, *found)):
            found.append(t)
    return found


def sizes_taken(t: Waiting, now: int) -> list[int]:
    """A ticket takes a table of its own size; one that asked for a smaller table
    takes any size down to two once it has waited that long (a private one never)."""
    if t.private or not t.accept_smaller_ms or now - t.created_ms < t.accept_smaller_ms:
        return [t.table_size]
    return list(range(t.table_size, 1, -1))


def close(a: Waiting, b: Waiting, now: int) -> bool:
    if not (a.by_rating or b.by_rating):
        return True
    return abs(a.rating - b.rating) <= max(a.window(now), b.window(now))


def _private_reference(anchor: Waiting, rest: list[Waiting], now: int) -> Group | None:
    hosts = [t for t in (anchor, *rest) if t.is_host]
    if not hosts:
        return None
    host = hosts[0]
    seated = [host, *(t for t in (anchor, *rest) if t is not host)][: host.table_size]
    if len(seated) == host.table_size:
        return Group(host.table_size, tuple(seated))
    if host.wants_bots(now):
        return Group(host.table_size, tuple(seated), bots=host.table_size - len(seated))
    return None


@settings(max_examples=300, deadline=None)
@given(queues())
def test_the_seating_is_exactly_its_plain_definition(case: tuple[list[Waiting], int]) -> None:
    waiting, now = case
    assert form_tables(waiting, now) == plainly_seated(waiting, now)


def test_a_claim_of_thousands_seats_as_the_plain_definition_does() -> None:
    """A full claim (the matcher takes up to 2,000 tickets at a time), all sizes in
    one family, some patient enough for a smaller table or bots."""
    rng = random.Random(11)
    waiting = [
        ticket(
            n,
            size=rng.choice((2, 3, 4)),
            at=n // 3,
            smaller=rng.choice((0, 0, 0, 500)),
            bots=rng.choice((0, 0, 0, 0, 900)),
        )
        for n in range(2_000)
    ]
    groups = form_tables(waiting, 1_000)
    assert groups == plainly_seated(waiting, 1_000)
    assert sum(len(g.tickets) for g in groups) > 1_900
