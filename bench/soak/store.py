"""What the run reads from PostgreSQL: tables finished and in play, connections,
and the storage each finished game takes."""

from __future__ import annotations

import asyncpg

STORAGE_TABLES = (
    "tables",
    "table_events",
    "action_requests",
    "table_seats",
    "tickets",
    "matches",
    "players",
)


async def db_counts(con: asyncpg.Connection) -> tuple[int, int, int]:
    """(finished tables, active tables, connections to this database)."""
    row = await con.fetchrow(
        "SELECT count(*) FILTER (WHERE status = 'finished') AS finished,"
        " count(*) FILTER (WHERE status = 'active') AS active,"
        " (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()) AS conns"
        " FROM tables"
    )
    assert row is not None
    return row["finished"], row["active"], row["conns"]


async def storage(con: asyncpg.Connection, games: int) -> list[str]:
    await con.execute("ANALYZE")
    lines = [f"  {'relation':<16} {'rows':>9} {'total size':>11} {'per finished game':>18}"]
    total = 0
    for name in STORAGE_TABLES:
        rows = await con.fetchval(f"SELECT count(*) FROM {name}")
        size = await con.fetchval("SELECT pg_total_relation_size($1::regclass)", name)
        total += size
        per = f"{size / games / 1024:,.1f} KiB" if games else "n/a"
        lines.append(f"  {name:<16} {rows:>9,} {size / 2**20:>8,.2f} MiB {per:>18}")
    per = f"{total / games / 1024:,.1f} KiB" if games else "n/a"
    lines.append(f"  {'all of the above':<16} {'':>9} {total / 2**20:>8,.2f} MiB {per:>18}")
    events = await con.fetchval("SELECT count(*) FROM table_events")
    payload = await con.fetchval(
        "SELECT coalesce(sum(pg_column_size(payload)), 0) FROM table_events"
    )
    if games:
        lines.append(
            f"  event log: {events / games:,.0f} events per game,"
            f" {payload / max(events, 1):,.0f} B payload per event (before row overhead)"
        )
    db_size = await con.fetchval("SELECT pg_database_size(current_database())")
    lines.append(f"  whole database: {db_size / 2**20:,.1f} MiB")
    return lines
