"""A replica's listening connection that the network lost without a word (no FIN,
no RST: a failed-over database host) is found out and replaced."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import asyncpg

from services.game.fanout import Fanout

from .processes import until
from .proxy import Proxy


def through(dsn: str, address: str) -> str:
    parts = urlsplit(dsn)
    user = parts.netloc.rpartition("@")[0]
    return urlunsplit(parts._replace(netloc=f"{user}@{address}" if user else address))


async def test_a_silent_listening_connection_is_replaced(fresh_dsn: str) -> None:
    parts = urlsplit(fresh_dsn)
    proxy = Proxy(f"{parts.hostname or '127.0.0.1'}:{parts.port or 5432}")
    listen_dsn = through(fresh_dsn, await proxy.start())
    pool = await asyncpg.create_pool(fresh_dsn, min_size=1, max_size=2)
    fanout = Fanout(pool, listen_dsn, poll_interval=0.1, listen_check_s=0.3)
    await fanout.start()
    try:
        await until(fanout.connected.is_set, "the listening connection")
        proxy.hold()  # the database's bytes no longer reach the replica
        await until(lambda: not fanout.connected.is_set(), "the silence to be noticed")
        proxy.release()
        await until(fanout.connected.is_set, "a new listening connection")
        assert len(proxy.links) >= 2  # listening again, on a connection of its own
    finally:
        await fanout.stop()
        await pool.close()
        await proxy.close()
