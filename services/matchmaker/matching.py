"""Which waiting tickets sit down together: a pure function of the queue and the clock.

FIFO by default: the oldest ticket is seated first, with the oldest companions
that fit. A rating queue only seats players whose ratings are within a window
that is wider while a rating is still unsure (its deviation large) and widens
with time waited, so nobody waits for ever. A ticket may accept a smaller
table, or bots in its empty seats, after waits it chose itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RATING_WINDOW = 100.0
"""Rating gap accepted at once in a rating queue (points on Elo's scale), at the
least: a settled rating's window."""
WINDOW_DEVIATIONS = 2.0
"""A rating's window at once spans this many deviations when that is wider than
`RATING_WINDOW`: a newcomer's (deviation about 246) about 490 points, anyone
whose skill is still plausibly theirs; a settled one's (about 43) 100."""
RATING_WIDENING = 25.0
"""Extra gap accepted per second waited: after 30 s, 750 points more, nearly anyone."""


@dataclass(frozen=True, slots=True)
class Waiting:
    ticket_id: str
    player_id: str
    family: str
    table_size: int
    created_ms: int
    rating: float = 1500.0
    by_rating: bool = False
    accept_smaller_ms: int = 0
    fill_bots_ms: int = 0
    private: bool = False
    is_host: bool = False
    bot_level: str = "normal"
    """How well the bots it asks for play (the host's decides a private table)."""
    deviation: float = 0.0
    """The rating's deviation (`services.common.rating`): 0 takes it as settled."""

    def waited(self, now_ms: int) -> int:
        return max(0, now_ms - self.created_ms)

    def sizes(self, now_ms: int) -> list[int]:
        """Table sizes this ticket takes now, preferred first."""
        if not self._smaller_now(now_ms):
            return [self.table_size]
        return list(range(self.table_size, 1, -1))

    def takes(self, size: int, now_ms: int) -> bool:
        """``size in self.sizes(now_ms)``, without making the list."""
        if size == self.table_size:
            return True
        return 2 <= size < self.table_size and self._smaller_now(now_ms)

    def _smaller_now(self, now_ms: int) -> bool:
        return (
            not self.private
            and bool(self.accept_smaller_ms)
            and self.waited(now_ms) >= self.accept_smaller_ms
        )

    def wants_bots(self, now_ms: int) -> bool:
        return bool(self.fill_bots_ms) and self.waited(now_ms) >= self.fill_bots_ms

    def window(self, now_ms: int) -> float:
        """The rating gap this ticket accepts now."""
        at_once = max(RATING_WINDOW, WINDOW_DEVIATIONS * self.deviation)
        return at_once + RATING_WIDENING * self.waited(now_ms) / 1000


@dataclass(frozen=True, slots=True)
class Group:
    size: int
    tickets: tuple[Waiting, ...]
    """In seat order: the oldest ticket takes seat 0."""
    bots: int = 0
    bot_level: str = "normal"
    """The level its bots play at: the ticket's that asked for them first."""


def _close(a: Waiting, b: Waiting, now_ms: int) -> bool:
    """Whether two tickets may sit at one table (every pair at a table must be)."""
    if not (a.by_rating or b.by_rating):
        return True
    # The more patient ticket's window decides, so a long wait always ends.
    return abs(a.rating - b.rating) <= max(a.window(now_ms), b.window(now_ms))


def form_tables(waiting: Sequence[Waiting], now_ms: int) -> list[Group]:
    """Seat as many tickets as possible, oldest first; the rest keep waiting."""
    groups: list[Group] = []
    by_family: dict[str, list[Waiting]] = {}
    for ticket in sorted(waiting, key=lambda t: (t.created_ms, t.ticket_id)):
        by_family.setdefault(ticket.family, []).append(ticket)
    for family in by_family.values():
        groups.extend(_seat_family(family, now_ms))
    return groups


def _seat_family(queue: list[Waiting], now_ms: int) -> list[Group]:
    """Oldest first, each ticket not seated yet anchors a table with the oldest
    later tickets that fit it, or waits. Seated tickets are skipped rather than
    removed, and a search for companions stops once it has enough, so in a queue
    where most tickets find company a claim of thousands costs about as much per
    ticket as one of a few. (A ticket that finds none still looks at every later
    one, as the rule requires.)"""
    groups = []
    seated: set[str] = set()
    for i, anchor in enumerate(queue):
        if anchor.ticket_id in seated:
            continue
        group = _group_for(anchor, _Rest(queue, i + 1, seated), now_ms)
        if group is not None:
            groups.append(group)
            seated.update(t.ticket_id for t in group.tickets)
    return groups


@dataclass(frozen=True, slots=True)
class _Rest:
    """The tickets after an anchor that are not seated yet, in queue order."""

    queue: list[Waiting]
    start: int
    seated: set[str]

    def all(self) -> list[Waiting]:
        return [t for t in self.queue[self.start :] if t.ticket_id not in self.seated]

    def mates(
        self, anchor: Waiting, size: int, now_ms: int, *, with_bots: bool = False
    ) -> list[Waiting]:
        """The oldest ``size - 1`` of them (or fewer, if that is all there is) that
        take a table of ``size`` with ``anchor`` and each other; ``with_bots``: only
        those who accept bots at their table, at the anchor's level."""
        found: list[Waiting] = []
        for j in range(self.start, len(self.queue)):
            if len(found) == size - 1:
                break
            t = self.queue[j]
            if (
                t.ticket_id not in self.seated
                and t.takes(size, now_ms)
                and (not with_bots or (t.fill_bots_ms and t.bot_level == anchor.bot_level))
                and _close(anchor, t, now_ms)
                and all(_close(m, t, now_ms) for m in found)
            ):
                found.append(t)
        return found


def _group_for(anchor: Waiting, rest: _Rest, now_ms: int) -> Group | None:
    if anchor.private:
        return _private_group(anchor, rest.all(), now_ms)
    for size in anchor.sizes(now_ms):
        mates = rest.mates(anchor, size, now_ms)
        if len(mates) == size - 1:
            return Group(size, (anchor, *mates))
    if anchor.wants_bots(now_ms):
        # A training table: the humans who asked for bots too (whenever their own
        # wait for them ends: company is better than bots sooner), never others.
        size = anchor.table_size
        mates = rest.mates(anchor, size, now_ms, with_bots=True)
        return Group(size, (anchor, *mates), bots=size - 1 - len(mates), bot_level=anchor.bot_level)
    return None


def _private_group(anchor: Waiting, rest: list[Waiting], now_ms: int) -> Group | None:
    """A private table starts when full, or with bots once its host's wait allows."""
    members = [anchor, *rest]
    hosts = [t for t in members if t.is_host]
    if not hosts:
        return None
    host = hosts[0]
    seated = [host, *(t for t in members if t is not host)][: host.table_size]
    if len(seated) == host.table_size:
        return Group(host.table_size, tuple(seated))
    if host.wants_bots(now_ms):
        bots = host.table_size - len(seated)
        return Group(host.table_size, tuple(seated), bots=bots, bot_level=host.bot_level)
    return None
