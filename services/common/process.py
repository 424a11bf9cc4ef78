"""The process-wide settings every server runs with, entry points and benchmarks alike."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from services.common.heap import keep_heap_small


@contextlib.asynccontextmanager
async def server_process() -> AsyncIterator[None]:
    """A heap that does not creep up over days (see `heap`), for as long as the
    block runs."""
    trimmer = keep_heap_small()
    try:
        yield
    finally:
        if trimmer is not None:
            trimmer.cancel()
