"""When a table's `Watch` stream that keeps failing is given up, and what the
player is told meanwhile.

An outage begins when a healthy stream (one that delivered an event, or stayed
open `SETTLED_S`) fails, and lasts until a resumed stream is healthy again. Every
attempt in between that fails without delivering anything counts against one
give-up clock, however well the table's snapshot (GetTable) answers. The player
is told once that the stream is lost, and once that it is back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import grpc

from services.common.pb.rummy.v1 import table_pb2

from .refusals import Refused

SETTLED_S = 10.0
"""A stream open this long is healthy even if the table stayed quiet: a failure
after that is a new outage, with a clock of its own."""


class Resume:
    """One table stream's health across its reconnects."""

    def __init__(
        self, notify: Callable[[str], None], give_up_after: float, target: str, signer: str
    ) -> None:
        """`target`: the game service streaming the table; `signer`: the server
        that signs the player in."""
        self.notify, self.give_up_after = notify, give_up_after
        self.target, self.signer = target, signer
        self.lost_at: float | None = None
        """When the current outage began; None while the stream is healthy."""
        self.relogged = False
        """Signed in afresh since the stream was last healthy, for a refused token."""
        self.answered = False
        """The table's snapshot answered during the current outage."""
        self.shown_seq: int | None = None
        self.resumed_from = 0
        self._timer: asyncio.TimerHandle | None = None

    def opened(self, position: int) -> None:
        """A stream is opened from `position`: healthy if it stays open a while."""
        self.resumed_from = position
        self._timer = asyncio.get_running_loop().call_later(SETTLED_S, self.healthy)

    def closed(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def healthy(self) -> None:
        """The stream delivers (or has stayed open): any outage is over."""
        if self.lost_at is not None:
            self.notify(f"Reconnected: resuming after event {self.resumed_from}.")
        self.lost_at, self.relogged, self.answered, self.shown_seq = None, False, False, None

    def failed(self, refused: Refused, notice: str) -> None:
        """A stream ended by ``refused`` before it was healthy: the first failure of
        an outage tells the player ``notice``; one past `give_up_after` raises."""
        if self.lost_at is None:
            self.lost_at = time.monotonic()
            self.notify(notice)
        elif time.monotonic() - self.lost_at > self.give_up_after:
            raise self.given_up(refused)

    def fresh(self, view: table_pb2.TableView) -> bool:
        """The snapshot answered: True if it is worth showing (not the one shown
        already in this outage)."""
        self.answered = True
        if view.last_seq == self.shown_seq:
            return False
        self.shown_seq = view.last_seq
        return True

    def given_up(self, refused: Refused) -> Refused:
        waited = f"{self.give_up_after:g} s"
        if refused.code == grpc.StatusCode.UNAUTHENTICATED:
            why = (
                f"The game service at {self.target} keeps refusing the sign-in from"
                f" {self.signer}, even a fresh one: the two servers may not share a signing key."
            )
        elif self.answered:
            why = (
                f"The game service at {self.target} answers, but its stream of this table"
                f" has kept failing for over {waited} ({refused.message}): stopped following"
                " the table."
            )
        else:
            why = (
                f"The game service at {self.target} has not answered for over {waited}"
                f" ({refused.message}): stopped following the table."
            )
        return Refused(refused.code, refused.reason, why, refused.metadata)
