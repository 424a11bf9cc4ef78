"""The project's processes and its async tests share one kind of event loop."""

from __future__ import annotations

import asyncio

import uvloop

from services.common import eventloop


def test_run_drives_a_coroutine_on_uvloop_and_returns_its_result() -> None:
    async def main() -> str:
        await asyncio.sleep(0)
        return type(asyncio.get_running_loop()).__module__

    assert eventloop.run(main()).startswith("uvloop")


async def test_async_tests_run_on_the_loop_the_servers_use() -> None:
    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
