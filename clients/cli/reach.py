"""Signing in when the server may not be there: said within seconds, in words.

A server that does not answer (nothing listens at the address, or the network
drops the packets) is told within `SAY_AFTER_S` with the address and what to
check, then tried again after a countdown the player sees; the caller decides
how the player gives up (q on the full screen, Ctrl-C on a line terminal).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from services.common.wire.refusals import Refusal

from .connection import Connection
from .refusals import RETRYABLE

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
        attempt = asyncio.ensure_future(conn.login())
        told = False
        try:
            if not (await asyncio.wait({attempt}, timeout=SAY_AFTER_S))[0]:
                # Told now; the attempt goes on (a TLS mismatch is still named).
                say(unreachable_text(conn.server))
                told = True
            await attempt
            return
        except Refusal as refused:
            if refused.code not in RETRYABLE:
                raise
        finally:
            attempt.cancel()
            conn.give_up_after, conn.notify = saved
        if not told:
            say(unreachable_text(conn.server))
        await countdown(RETRY_IN_S)


async def count_in_lines(seconds: int) -> None:
    """The countdown of a line terminal: said once, then waited."""
    print(f"Trying again in {seconds} s (Ctrl-C gives up)…", flush=True)
    await asyncio.sleep(seconds)
