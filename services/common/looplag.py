"""How late this process's event loop runs what is due: a replica's saturation signal.

Every call, stream message and database answer of a replica waits its turn on
one event loop. When the loop is busy (a burst of calls, a long synchronous
step, a process starved of CPU), everything in flight waits together, and the
latency of every RPC grows by the same amount. A timer that ticks every
`TICK_S` and records how late it woke measures that wait directly, whatever
caused it; the database's own latency is in `rummy_db_transaction_seconds`.
"""

from __future__ import annotations

import asyncio
import contextlib

from services.common import metrics

TICK_S = 0.025
"""40 wake-ups a second: a few microseconds of CPU each, and fine enough to see
a stall of one tick."""


class LoopLag:
    """A background task observing `rummy_event_loop_lag_seconds` each tick."""

    def __init__(self, tick_s: float = TICK_S) -> None:
        self._tick_s = tick_s
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if not self.running:
            self._task = asyncio.create_task(self._run(), name="loop-lag")

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self._tick_s
            await asyncio.sleep(self._tick_s)
            metrics.LOOP_LAG.observe(max(0.0, loop.time() - due))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
