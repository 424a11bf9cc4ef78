"""Pool settings and DSN helpers."""

from __future__ import annotations

import pytest

from services.common.db import database_name, open_pool, with_database


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


def test_with_database_keeps_everything_else() -> None:
    dsn = "postgresql://user:pw@host:5433/main?sslmode=require"
    assert with_database(dsn, "other") == "postgresql://user:pw@host:5433/other?sslmode=require"
    assert database_name(with_database(dsn, "a b")) == "a b"
    with pytest.raises(ValueError):
        with_database("host=localhost dbname=main", "other")
