"""What a matchmaker transaction counts is counted once it commits, and not at
all when it rolls back."""

from __future__ import annotations

import asyncpg
import pytest

from services.common.db import migrate
from services.matchmaker.aftercommit import after_commit, transaction


async def test_updates_wait_for_the_commit_and_go_with_a_rollback(fresh_dsn: str) -> None:
    counted: list[str] = []
    con = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(con)
        async with transaction(con):
            after_commit(lambda: counted.append("committed"))
            async with transaction(con):  # a savepoint joins the outer transaction
                after_commit(lambda: counted.append("inner"))
            assert counted == [], "nothing counted before the commit"
        assert counted == ["committed", "inner"]

        with pytest.raises(asyncpg.UniqueViolationError):
            async with transaction(con):
                await con.execute("INSERT INTO players (id) VALUES ('p')")
                after_commit(lambda: counted.append("rolled back"))
                await con.execute("INSERT INTO players (id) VALUES ('p')")
        assert counted == ["committed", "inner"]

        after_commit(lambda: counted.append("no transaction"))  # applies at once
        assert counted[-1] == "no transaction"
    finally:
        await con.close()
