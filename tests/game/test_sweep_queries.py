"""The sweeper's two statements read only due turns, however many tables wait on
their clocks: the deadline index bounds the scan. (With a bare, volatile
clock_timestamp() PostgreSQL cannot use it as an index bound: every poll read the
deadline of every active table, and sorted them.)"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import asyncpg
import pytest

from services.common.db.migrations import migrate
from services.game.statements import CLAIM_DUE, COUNT_DUE

WAITING = 2_000
DUE = 3


@pytest.fixture
async def con(fresh_dsn: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(connection)
        for count, offset in ((WAITING, timedelta(hours=1)), (DUE, timedelta(seconds=-1))):
            await connection.execute(
                "INSERT INTO tables (ruleset, state, turn_deadline) SELECT 'cafe', '\\x00',"
                " now() + $2::interval FROM generate_series(1, $1)",
                count,
                offset,
            )
        await connection.execute("UPDATE table_clock SET beat_at = now()")  # a replica marked
        await connection.execute("ANALYZE tables")
        yield connection
    finally:
        await connection.close()


async def plan(con: asyncpg.Connection, statement: str, *args: Any) -> dict[str, Any]:
    async with con.transaction():
        rows = await con.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", *args)
    return dict(json.loads(rows)[0]["Plan"])


def nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    return [node, *(n for child in node.get("Plans", []) for n in nodes(child))]


@pytest.mark.parametrize("statement", ["probe", "claim"])
async def test_a_sweep_reads_only_the_due_turns(con: asyncpg.Connection, statement: str) -> None:
    query, args = (COUNT_DUE.sql, (100,)) if statement == "probe" else (CLAIM_DUE.sql, (5.0,))
    scans = [n for n in nodes(await plan(con, query, *args)) if "Relation Name" in n]
    # A claim also reads the clock's one row: whether it is marked, and its stops.
    assert {s["Relation Name"] for s in scans} <= {"tables", "table_clock"}
    assert [s["Relation Name"] for s in scans].count("tables") == 1
    scan = next(s for s in scans if s["Relation Name"] == "tables")
    assert scan.get("Index Name") == "tables_turn_deadline_idx", scan
    assert "turn_deadline" in scan.get("Index Cond", ""), scan
    # The tables waiting an hour are never read.
    assert scan["Actual Rows"] + scan.get("Rows Removed by Filter", 0) <= DUE, scan


async def test_a_claim_reads_no_table_while_nobody_marks_the_clock(con: asyncpg.Connection) -> None:
    """Right after an outage nearly every table is due; until a replica marks the
    clock again, every claim answers none without reading them."""
    await con.execute("UPDATE table_clock SET beat_at = now() - interval '1 minute'")
    scans = [n for n in nodes(await plan(con, CLAIM_DUE.sql, 5.0)) if "Relation Name" in n]
    tables = [s for s in scans if s["Relation Name"] == "tables"]
    assert tables and all(s.get("Actual Loops", 0) == 0 for s in tables), scans
    assert await con.fetchrow(CLAIM_DUE.sql, 5.0) is None
