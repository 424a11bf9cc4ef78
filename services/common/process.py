"""The process-wide settings every server runs with, entry points and benchmarks alike."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from services.common.collector import tune_collector
from services.common.heap import keep_heap_small


@contextlib.asynccontextmanager
async def server_process() -> AsyncIterator[None]:
    """A collector set for thousands of open calls, and a heap that does not creep
    up over days (see `collector` and `heap`), for as long as the block runs."""
    tune_collector()
    trimmer = keep_heap_small()
    try:
        yield
    finally:
        if trimmer is not None:
            trimmer.cancel()
