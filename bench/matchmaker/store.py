"""The database rows the run writes and reads itself: players before a phase, and
the check of tickets, matches and seats after the run."""

from __future__ import annotations

import json

import asyncpg


async def add_players(dsn: str, prefix: str, count: int) -> list[str]:
    """Players as AuthService.Login leaves them, written in one COPY."""
    ids = [f"{prefix}-{i:05d}" for i in range(count)]
    con = await asyncpg.connect(dsn)
    try:
        await con.copy_records_to_table(
            "players",
            records=[(pid, f"Bench {pid}") for pid in ids],
            columns=["id", "display_name"],
        )
    finally:
        await con.close()
    return ids


async def check_store(dsn: str) -> str:
    """What the database says after the run: every ticket matched once, nobody twice."""
    con = await asyncpg.connect(dsn)
    try:
        states = {
            r["state"]: r["n"]
            for r in await con.fetch("SELECT state, count(*) AS n FROM tickets GROUP BY state")
        }
        twice = await con.fetchval(
            "SELECT count(*) FROM (SELECT player_id FROM table_seats GROUP BY player_id"
            " HAVING count(*) > 1) AS d"
        )
        matches = {
            r["state"]: r["n"]
            for r in await con.fetch("SELECT state, count(*) AS n FROM matches GROUP BY state")
        }
    finally:
        await con.close()
    return (
        f"tickets by state {json.dumps(states)}; matches {json.dumps(matches)};"
        f" players seated twice: {twice}"
    )
