"""When a stream the client follows across reconnects (a table's `Watch`, the
matchmaker's wait for a table) is given up, and what the player is told meanwhile.

An outage begins when a healthy stream (one that delivered something worth
having, or stayed open `SETTLED_S`) fails, and lasts until a resumed stream is
healthy again. Every attempt in between that fails without that counts against
one give-up clock, however well the server answers other calls (the table's
snapshot, the ticket). The player is told once that the stream is lost, and once
that it is back. A token refused even right after a fresh sign-in is signed in
again after a pause, not at once, and counts against the same clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import grpc

from services.common.pb.rummy.v1 import table_pb2
from services.common.wire.refusals import Refusal

from .refusals import STREAM_RETRYABLE, rate_limited_for

if TYPE_CHECKING:
    from .connection import Connection

SETTLED_S = 10.0
"""A stream open this long is healthy even if the table stayed quiet: a failure
after that is a new outage, with a clock of its own."""


@dataclass(frozen=True, slots=True)
class Followed:
    """What a stream follows, in the player's words."""

    service: str
    """The server that streams it: "game service"."""
    stream: str
    """The stream, as the server's: "its stream of this table"."""
    stopped: str
    """What giving it up stops: "stopped following the table"."""
    back: str
    """Told once the stream is healthy again; `{position}`: where it resumed."""
    sign_in_refused: str
    """Told once when the server refuses even a fresh sign-in."""


TABLE = Followed(
    "game service",
    "its stream of this table",
    "stopped following the table",
    "Reconnected: resuming after event {position}.",
    "The game service refused the sign-in: trying again…",
)


class Resume:
    """One stream's health across its reconnects."""

    def __init__(
        self,
        notify: Callable[[str], None],
        give_up_after: float,
        target: str,
        signer: str,
        followed: Followed = TABLE,
    ) -> None:
        """`target`: the server streaming; `signer`: the server that signs the
        player in (often the same address)."""
        self.notify, self.give_up_after = notify, give_up_after
        self.target, self.signer, self.followed = target, signer, followed
        self.lost_at: float | None = None
        """When the current outage began; None while the stream is healthy."""
        self.relogged = False
        """Signed in afresh since the stream was last healthy, for a refused token."""
        self.answered = False
        """The server answered another call (the table's snapshot, say) during
        the current outage."""
        self.shown_seq: int | None = None
        self.limited_at: float | None = None
        """When the server began turning the stream away for its rate (or being full)."""
        self.resumed_from = 0
        self._timer: asyncio.TimerHandle | None = None

    def opened(self, position: int = 0) -> None:
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
            self.notify(self.followed.back.format(position=self.resumed_from))
        self.lost_at, self.relogged, self.answered, self.shown_seq = None, False, False, None

    def failed(self, refused: Refusal, notice: str) -> None:
        """A stream ended by ``refused`` before it was healthy: the first failure of
        an outage tells the player ``notice``; one past `give_up_after` raises."""
        if self.lost_at is None:
            self.lost_at = time.monotonic()
            self.notify(notice)
        elif time.monotonic() - self.lost_at > self.give_up_after:
            raise self.given_up(refused)

    async def handled(
        self,
        refused: Refusal,
        conn: Connection,
        *,
        refreshed: bool,
        pause: Callable[[], Awaitable[None]],
    ) -> bool:
        """What every stream does with ``refused`` first: True once it is dealt
        with (a new sign-in, a rate limit waited out) and the stream should open
        again; a refusal no retry can help is raised. False: an outage, which the
        caller tells as its own (`failed`). A refused token (TOKEN_EXPIRED,
        TOKEN_INVALID: say the servers restarted with another signing secret) is
        always dealt with by signing in again, shared with the connection's other
        calls refused at the same time (`Connection.sign_in_again`)."""
        if refused.code == grpc.StatusCode.UNAUTHENTICATED:
            stale = conn.token  # refused, unless renewed since (``refreshed``)

            async def login() -> None:
                await conn.sign_in_again(stale)

            await self.sign_in_again(refused, refreshed=refreshed, login=login, pause=pause)
            return True
        if rate_limited_for(refused) is not None:
            self.limited_at = self.limited_at or time.monotonic()
            if await conn.waited_out(refused, self.limited_at):
                return True
        if refused.code not in STREAM_RETRYABLE:
            raise refused
        return False

    async def sign_in_again(
        self,
        refused: Refusal,
        *,
        refreshed: bool,
        login: Callable[[], Awaitable[None]],
        pause: Callable[[], Awaitable[None]],
    ) -> None:
        """The stream's token was refused (UNAUTHENTICATED, ``refused``): get one
        to open it again with. A token renewed since the stream was opened
        (``refreshed``) is used as it is. Otherwise the player signs in again: at
        once the first time since the stream was healthy; after that, only
        after ``pause``, the refusal counting as a failure (`failed`)."""
        if self.relogged:  # refused even fresh: sign in again, but not at once
            self.failed(refused, self.followed.sign_in_refused)
            await pause()
        elif refreshed:
            self.relogged = True
            return
        # TOKEN_EXPIRED (the stream's token) or TOKEN_INVALID: sign in again.
        await login()
        self.relogged = True

    def fresh(self, view: table_pb2.TableView) -> bool:
        """The snapshot answered: True if it is worth showing (not the one shown
        already in this outage)."""
        self.answered = True
        if view.last_seq == self.shown_seq:
            return False
        self.shown_seq = view.last_seq
        return True

    def given_up(self, refused: Refusal) -> Refusal:
        waited = f"{self.give_up_after:g} s"
        server = f"The {self.followed.service} at {self.target}"
        if refused.code == grpc.StatusCode.UNAUTHENTICATED and self.signer == self.target:
            why = (
                f"{server} keeps refusing the sign-in given at that same address, even a"
                " fresh one: the servers behind it may not share a signing key."
            )
        elif refused.code == grpc.StatusCode.UNAUTHENTICATED:
            why = (
                f"{server} keeps refusing the sign-in from {self.signer}, even a fresh one:"
                " the two servers may not share a signing key."
            )
        elif self.answered:
            why = (
                f"{server} answers, but {self.followed.stream} has kept failing for over"
                f" {waited} ({refused.message}): {self.followed.stopped}."
            )
        else:
            why = (
                f"{server} has not answered for over {waited} ({refused.message}):"
                f" {self.followed.stopped}."
            )
        return Refusal(refused.code, refused.reason, why, refused.metadata)
