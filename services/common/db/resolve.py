"""Where the database is: DATABASE_URL, or an embedded server started for us."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from .embedded import DEFAULT_DATA_DIR, DEFAULT_DATABASE, EmbeddedPostgres

DATABASE_URL = "DATABASE_URL"


@asynccontextmanager
async def resolve_database(
    *,
    environ: Mapping[str, str] | None = None,
    data_dir: str | os.PathLike[str] = DEFAULT_DATA_DIR,
    database: str = DEFAULT_DATABASE,
) -> AsyncIterator[str]:
    """Yield a DSN: `DATABASE_URL` when set, else that of an embedded server.

    The embedded server keeps its data in `data_dir` between runs and is
    stopped when the block exits (unless another process started it).
    """
    env = os.environ if environ is None else environ
    url = env.get(DATABASE_URL, "").strip()
    if url:
        yield url
        return
    async with EmbeddedPostgres(data_dir, database=database) as dsn:
        yield dsn
