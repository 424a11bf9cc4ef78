"""The event loop the servers and benchmarks run on: uvloop where it exists.

A game replica spends most of its time between the sockets: gRPC's completion
callbacks, asyncpg's protocol and the timers of turns and streams. uvloop runs
that plumbing in C (libuv) rather than in asyncio's Python loop. Measured with
`bench.game` (closed loop, 100 tables, three interleaved pairs of runs on one
machine), together with orjson for the stored state and events: the game
server's CPU per action fell from 1.10 to 0.99 ms and its peak rose 9%
(829 to 905 actions/s) on a machine the server, its bots and PostgreSQL share.
Where uvloop is not installed (it has no Windows build) the standard
loop runs everything the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

try:
    import uvloop
except ImportError:  # pragma: no cover - platforms without a uvloop build
    uvloop = None  # type: ignore[assignment]

T = TypeVar("T")


def new_loop() -> asyncio.AbstractEventLoop:
    """A fresh event loop of the kind `run` uses."""
    return uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()


def run(main: Coroutine[Any, Any, T], *, debug: bool | None = None) -> T:
    """`asyncio.run(main)` on the project's event loop."""
    factory: Callable[[], asyncio.AbstractEventLoop] = new_loop
    with asyncio.Runner(debug=debug, loop_factory=factory) as runner:
        return runner.run(main)
