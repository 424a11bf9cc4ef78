"""Pool settings and DSN helpers."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from services.common.db import database_name, open_pool, with_database

WAIT_S = 30.0


async def test_pool_names_itself_and_bounds_queries(fresh_dsn: str) -> None:
    pool = await open_pool(fresh_dsn, application_name="rummy-test", command_timeout=0.2)
    try:
        # The pool's bound holds for every query; the checks around it give themselves
        # room, so a loaded machine cannot fail them.
        assert await pool.fetchval("SHOW application_name", timeout=10) == "rummy-test"
        with pytest.raises(TimeoutError):
            await pool.execute("SELECT pg_sleep(2)")
        # The pool is still usable after a timed-out query.
        assert await pool.fetchval("SELECT 1", timeout=10) == 1
    finally:
        await pool.close()


async def test_a_session_left_in_a_transaction_is_ended_and_its_locks_freed(
    fresh_dsn: str,
) -> None:
    """What a replica that died mid-transaction leaves behind: its row lock goes
    with its session, long before TCP would notice it is gone."""
    pool = await open_pool(fresh_dsn, idle_in_transaction_s=0.5)
    other = await asyncpg.connect(fresh_dsn)
    try:
        await other.execute(
            "CREATE TABLE locked (id int PRIMARY KEY); INSERT INTO locked VALUES (1)"
        )
        async with pool.acquire() as con:
            await con.execute("BEGIN; SELECT * FROM locked WHERE id = 1 FOR UPDATE")
            # ...and the replica says nothing more. The lock is free again:
            async with asyncio.timeout(WAIT_S):
                await other.execute("UPDATE locked SET id = 2 WHERE id = 1")
            # The session is gone (asyncpg says so in one of three ways, as it learns).
            with pytest.raises(
                (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)
            ):
                await con.execute("COMMIT")
        assert await pool.fetchval("SELECT count(*) FROM locked", timeout=10) == 1
    finally:
        await other.close()
        pool.terminate()


async def test_a_lock_timeout_bounds_every_wait_for_a_lock(fresh_dsn: str) -> None:
    pool = await open_pool(fresh_dsn, lock_timeout_s=0.2)
    other = await asyncpg.connect(fresh_dsn)
    try:
        await other.execute(
            "CREATE TABLE locked (id int PRIMARY KEY); INSERT INTO locked VALUES (1)"
        )
        async with other.transaction():
            await other.execute("SELECT * FROM locked FOR UPDATE")
            with pytest.raises(asyncpg.LockNotAvailableError):
                await pool.execute("UPDATE locked SET id = 2", timeout=WAIT_S)
    finally:
        await other.close()
        await pool.close()


def test_with_database_keeps_everything_else() -> None:
    dsn = "postgresql://user:pw@host:5433/main?sslmode=require"
    assert with_database(dsn, "other") == "postgresql://user:pw@host:5433/other?sslmode=require"
    assert database_name(with_database(dsn, "a b")) == "a b"
    with pytest.raises(ValueError):
        with_database("host=localhost dbname=main", "other")
