"""Signing in when the server may not be there: said within seconds, in words.

A server that does not answer (nothing listens at the address, or the network
drops the packets) is told within `SAY_AFTER_S` with the address and what to
check, then tried again after a countdown the player sees; the caller decides
how the player gives up (q on the full screen, Ctrl-C on a line terminal).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from .connection import Connection
from .refusals import RETRYABLE, Refused

SAY_AFTER_S = 3.5
"""A sign-in still unanswered after this long is told to the player."""
RETRY_IN_S = 5
"""Seconds counted down before the next try."""


def unreachable_text(server: str) -> str:
    return (
        f"No answer from the server at {server}. Is `make run` going? "
        "(Another address: --server HOST:PORT, or $RUMMY_SERVER.)"
    )


async def sign_in(
    conn: Connection,
    *,
    say: Callable[[str], None],
    countdown: Callable[[int], Awaitable[None]],
) -> None:
    """Sign in at ``conn``'s server, however long it takes to answer. A refusal that
    is no outage (a TLS mismatch, a bad device id) is raised at once."""
    while True:
        saved = conn.give_up_after, conn.notify
        conn.give_up_after, conn.notify = SAY_AFTER_S - 0.5, (lambda _text: None)
        try:
            await asyncio.wait_for(conn.login(), SAY_AFTER_S)
            return
        except TimeoutError:
            pass
        except Refused as refused:
            if refused.code not in RETRYABLE:
                raise
        finally:
            conn.give_up_after, conn.notify = saved
        say(unreachable_text(conn.server))
        await countdown(RETRY_IN_S)
