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
) -> Pool:
    """Open an asyncpg pool with the settings every service wants.

    - `command_timeout` bounds every query that does not pass its own timeout,
      so a stuck statement surfaces as an error instead of a hung RPC.
    - `statement_cache_size=0` is needed behind PgBouncer in transaction mode;
      with a direct connection the cache saves a parse per query.
    - idle connections above `min_size` are closed after five minutes so a
      burst does not pin server slots forever.
    """
    name = (application_name or default_application_name())[:_MAX_APPLICATION_NAME]
    pool = await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        command_timeout=command_timeout,
        statement_cache_size=statement_cache_size,
        max_inactive_connection_lifetime=max_inactive_connection_lifetime,
        timeout=connect_timeout,
        server_settings={"application_name": name},
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
