"""Deleting old rows in bounded batches, as both services' retention does."""

from __future__ import annotations

from .pool import Connection, Pool

DEFAULT_BATCH = 500


async def purge_in_batches(
    db: Connection | Pool, sql: str, *, older_than_s: float, batch: int = DEFAULT_BATCH
) -> int:
    """Run ``sql`` (its $1 the age in seconds, its $2 the batch size; each run its
    own short transaction) until a batch comes back short; how many rows it
    deleted in all. The statement claims its rows with FOR UPDATE SKIP LOCKED, so
    every replica may purge at once, none waits on another, and each row goes once."""
    if batch < 1:
        raise ValueError("batch must be at least 1")
    total = 0
    while True:
        status = await db.execute(sql, float(older_than_s), batch)
        deleted = int(status.rpartition(" ")[2])
        total += deleted
        # A short batch: nothing old is left, or what is left is locked by
        # another purger (SKIP LOCKED), which deletes it itself.
        if deleted < batch:
            return total
