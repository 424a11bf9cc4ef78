"""Connection pools and DSN helpers."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TypeAlias
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import asyncpg

# Names for annotations. asyncpg's classes are generic only in its stubs, and
# a pooled connection is a proxy class of its own: `Connection` covers both.
if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    Pool: TypeAlias = asyncpg.Pool[asyncpg.Record]
    Connection: TypeAlias = asyncpg.Connection[asyncpg.Record] | PoolConnectionProxy[asyncpg.Record]
else:
    Pool = asyncpg.Pool
    Connection = asyncpg.Connection

# PostgreSQL truncates application_name to NAMEDATALEN - 1 bytes.
_MAX_APPLICATION_NAME = 63
IDLE_IN_TRANSACTION_S = 60.0
"""PostgreSQL ends a session that sits this long inside a transaction: a replica
that died (or lost the network) mid-transaction releases its row locks then,
not when TCP gives up on it hours later. Far above any transaction of the game
service's (milliseconds); the matchmaker, whose transactions wait on its
CreateTables calls, passes its own."""
KEEPALIVE = {"tcp_keepalives_idle": "30", "tcp_keepalives_interval": "10"}
"""The server probes a silent client after 30 s: a dead replica's idle
connections leave the connection budget within a minute or so."""


def default_application_name() -> str:
    """Name shown in pg_stat_activity: the running program, e.g. `rummy-game`."""
    program = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not program or program.endswith(".py") or program in {"-c", "-m", "python", "pytest"}:
        return "rummy"
    return program[:_MAX_APPLICATION_NAME]


async def open_pool(
    dsn: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    command_timeout: float | None = 30.0,
    statement_cache_size: int = 100,
    max_inactive_connection_lifetime: float = 300.0,
    connect_timeout: float = 10.0,
    application_name: str | None = None,
    idle_in_transaction_s: float = IDLE_IN_TRANSACTION_S,
    lock_timeout_s: float = 0.0,
) -> Pool:
    """Open an asyncpg pool with the settings every service wants.

    - `command_timeout` bounds every query that does not pass its own timeout,
      so a stuck statement surfaces as an error instead of a hung RPC.
    - `statement_cache_size=0` is needed behind PgBouncer in transaction mode;
      with a direct connection the cache saves a parse per query.
    - idle connections above `min_size` are closed after five minutes so a
      burst does not pin server slots forever.
    - `idle_in_transaction_s` and the keepalives: see above. `lock_timeout_s`
      (0: none) bounds every wait for a lock, which then fails as an outage does.
    """
    name = (application_name or default_application_name())[:_MAX_APPLICATION_NAME]
    settings = {
        "application_name": name,
        "idle_in_transaction_session_timeout": f"{round(idle_in_transaction_s * 1000)}ms",
        "lock_timeout": f"{round(lock_timeout_s * 1000)}ms",
        **KEEPALIVE,
    }
    pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        command_timeout=command_timeout,
        statement_cache_size=statement_cache_size,
        max_inactive_connection_lifetime=max_inactive_connection_lifetime,
        timeout=connect_timeout,
        server_settings=settings,
        reset=_reset,
    )
    return pool


async def _reset(conn: Connection) -> None:
    """What a connection needs before it returns to the pool: no open transaction.

    asyncpg's default also unlocks advisory locks, closes cursors, UNLISTENs and
    RESETs settings: four more statements on every release, for session state
    this project never leaves behind (migrations release their lock, LISTEN uses
    its own connections, nothing SETs a session setting)."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")


def with_database(dsn: str, database: str) -> str:
    """`dsn` (a postgresql:// URL) pointing at another database on the same server."""
    parts = urlsplit(dsn)
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ValueError("expected a postgresql:// URL")
    return urlunsplit(parts._replace(path="/" + quote(database, safe="")))


def database_name(dsn: str) -> str:
    """The database a postgresql:// URL names ('' when it names none)."""
    return unquote(urlsplit(dsn).path.lstrip("/"))
