"""The ticket LISTEN connection that the network lost without a word (no FIN, no
RST: a failed-over database host) is found out and replaced."""

from __future__ import annotations

import asyncio
import uuid
from urllib.parse import urlsplit, urlunsplit

from services.matchmaker.wakeups import CHANNEL
from tests.faults.proxy import Link, Proxy

from .harness import WAIT_S, backend, store
from .test_outages import until

LISTEN = f'LISTEN "{CHANNEL}"'.encode()


def through(dsn: str, address: str) -> str:
    """``dsn`` with its host and port replaced by ``address``."""
    parts = urlsplit(dsn)
    credentials, at, _ = parts.netloc.rpartition("@")
    return urlunsplit(parts._replace(netloc=f"{credentials}{at}{address}"))


def listening(proxy: Proxy) -> list[Link]:
    """The proxied connections that sent the replica's LISTEN, oldest first."""
    return [link for link in proxy.links if LISTEN in link.up]


async def test_a_silent_ticket_listener_connection_is_replaced(fresh_dsn: str) -> None:
    parts = urlsplit(fresh_dsn)
    proxy = Proxy(f"{parts.hostname or '127.0.0.1'}:{parts.port or 5432}")
    proxied = through(fresh_dsn, await proxy.start())
    try:
        async with backend(fresh_dsn, replicas=0) as b, store(fresh_dsn) as db:
            replica = await b.add_replica(dsn=proxied, matching=False, listen_answer_s=0.3)
            await until(lambda: len(listening(proxy)) == 1, "the replica listens")
            # The database's bytes no longer reach the listener; its pool is untouched.
            listening(proxy)[0].holding = True
            await until(lambda: len(listening(proxy)) == 2, "the replica listens again")
            # And the new connection hears what the old one no longer would.
            ticket = uuid.uuid4()
            with b.matchmakers[replica].wakeups.watch(ticket) as woken:
                loop = asyncio.get_running_loop()
                deadline = loop.time() + WAIT_S
                while not woken.is_set():
                    # Sent again until heard: one sent before the LISTEN took is lost.
                    assert loop.time() < deadline, "never happened: a notification is heard"
                    await db.con.execute("SELECT pg_notify($1, $2)", CHANNEL, str(ticket))
                    await asyncio.sleep(0.1)
    finally:
        await proxy.close()
