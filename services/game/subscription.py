"""One Watch stream's live feed from the fan-out: the events queued for it, and
why (in a sentence for the player) it must resume from its last seq; and how
`Fanout.follow` ends a watch early."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from .eventlog import LoggedEvent

T = TypeVar("T")

STOPPING = "The server is restarting: resume from your last event."
FELL_BEHIND = "You fell behind the table: resume from your last event."
CUT_OFF = "The server lost touch with the game's records: resume from your last event."
UNREADABLE = "The server cannot read this table's newest events: resume from your last event."
READ_FAILED = "Reconnect and resume."


class ResumeRequired(Exception):
    """The watcher must resume from ``after_seq``, its last event, for the reason
    ``why`` gives (a sentence for the player); wherever it reconnects to."""

    def __init__(self, why: str, after_seq: int) -> None:
        super().__init__(why)
        self.why = why
        self.after_seq = after_seq


class TableGone(Exception):
    """Retention deleted the (finished) table while its log was being read."""


class Inbox(Generic[T]):
    """The part of `asyncio.Queue` a watcher uses, for its one reader: an idle
    `asyncio.Queue` holds four deques (3 KB), and a replica holds one per stream."""

    __slots__ = ("_items", "_maxsize", "_waiter")

    def __init__(self, maxsize: int) -> None:
        self._items: list[T] = []
        self._maxsize = maxsize
        self._waiter: asyncio.Future[None] | None = None

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, item: T) -> None:
        if len(self._items) >= self._maxsize:
            raise asyncio.QueueFull
        self._items.append(item)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def arrival(self) -> asyncio.Future[None]:
        """Done once an item is put (await it while `empty()`; no coroutine is kept)."""
        self._waiter = asyncio.get_running_loop().create_future()
        return self._waiter

    def pop(self) -> T:
        return self._items.pop(0)

    def clear(self) -> None:
        self._items.clear()


@dataclass(eq=False, slots=True)
class Subscription:
    table_id: uuid.UUID
    position: int
    """The last seq its watcher has handled."""
    queue: Inbox[LoggedEvent | None]
    """Live events; None only wakes the watcher to look at the flags below."""
    ended: str | None = None
    """Why its watcher must resume from its position, in a sentence for the player
    (the replica is stopping, the watcher fell behind...). Its queue is emptied."""
    live: bool = False
    """Caught up with the log: live events are queued for it. Until then they are not
    (the watcher reads them from the log), and `missed` says some came."""
    missed: bool = False


def end(sub: Subscription, why: str) -> None:
    """Send ``sub``'s watcher to resume, saying ``why``; what it had queued is dropped
    (it reads that from the log again), so a stalled stream holds no events."""
    if sub.ended is None:
        sub.ended = why
    sub.queue.clear()
    sub.queue.put_nowait(None)  # wakes it if it waits
