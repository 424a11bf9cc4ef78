"""`matching.form_tables` against its plain definition and its invariants, on queues
hypothesis draws (sizes, families, ratings, patience, bots, private tables)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from services.common.rating import DEFAULT_DEVIATION, SETTLED_DEVIATION
from services.matchmaker.matching import (
    RATING_WINDOW,
    Group,
    Waiting,
    form_tables,
)

from .test_matching import FIFO, OTHER, RATED, private, ticket

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
                deviation=draw(
                    st.sampled_from([0.0, SETTLED_DEVIATION, DEFAULT_DEVIATION])
                    | st.floats(0, DEFAULT_DEVIATION)
                ),
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


# Rated tickets sit this far apart at the least: more than the window a ticket
# is granted at once, so only the widening can seat any of them.
RATED_SPACING = 150


@st.composite
def rated_pairs(draw: st.DrawFn) -> list[Waiting]:
    """Two or more rated tickets for two seats, no other option, each rating in
    its own band ``RATED_SPACING`` wide between 800 and 2,400, so every pair is
    at least ``RATED_SPACING - 40`` points apart, and at most 1,600."""
    bands = draw(st.lists(st.integers(0, 10), min_size=2, max_size=11, unique=True))
    return [
        ticket(
            n,
            size=2,
            family=RATED,
            at=draw(st.integers(0, 120_000)),
            rating=800 + RATED_SPACING * band + draw(st.floats(0, 40)),
        )
        for n, band in enumerate(bands)
    ]


@settings(max_examples=100, deadline=None)
@given(rated_pairs())
def test_a_long_enough_wait_seats_every_rated_pair(rated: list[Waiting]) -> None:
    ratings = sorted(t.rating for t in rated)
    gaps = [b - a for a, b in itertools.pairwise(ratings)]
    # No pair could sit at once: the window has to widen for any table to form.
    assert len(rated) >= 2 and min(gaps) > RATING_WINDOW
    # And no gap is past 1,600 points: an hour closes any of them.
    assert ratings[-1] - ratings[0] <= 1_600
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
