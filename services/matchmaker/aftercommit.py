"""Metrics of what a transaction did, counted once it commits.

A transaction that rolls back (a lost race, a failed COMMIT later recovered
and done again) changed nothing, so it must count nothing: the matchmaker's
transactions run in `transaction(con)`, and what they count goes through
`after_commit`, held until the commit and dropped with a rollback. Outside such
a transaction an update applies at once (its statement has committed already).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar

from services.common.db import Connection

_pending: ContextVar[list[Callable[[], None]] | None] = ContextVar("after_commit", default=None)


def after_commit(update: Callable[[], None]) -> None:
    """Apply ``update`` once the enclosing `transaction` commits (at once if none)."""
    pending = _pending.get()
    if pending is None:
        update()
    else:
        pending.append(update)


@contextlib.asynccontextmanager
async def transaction(con: Connection) -> AsyncIterator[None]:
    """``con.transaction()``, applying what `after_commit` held once it commits.
    Nested in another, it joins the outer one's updates."""
    if _pending.get() is not None:
        async with con.transaction():
            yield
        return
    pending: list[Callable[[], None]] = []
    token = _pending.set(pending)
    try:
        async with con.transaction():
            yield
    finally:
        _pending.reset(token)
    for update in pending:
        update()
