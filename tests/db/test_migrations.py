"""Migrations against a real PostgreSQL: bundled schema, idempotence, races, edits."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import asyncpg
import pytest

from services.common import migrate_cli, rating
from services.common.db import (
    DEFAULT_DATA_DIR,
    ChecksumMismatchError,
    Migration,
    MigrationError,
    load_migrations,
    migrate,
    migration_status,
    open_pool,
)
from services.common.db.migrations import LOCK_KEY

GAME_TABLES = ["players", "tables", "table_seats", "table_events", "action_requests"]


async def test_bundled_migrations_apply(fresh_dsn: str) -> None:
    bundled = load_migrations()
    assert [m.version for m in bundled][:1] == [1]
    pool = await open_pool(fresh_dsn, max_size=2)
    try:
        applied = await migrate(pool)
        assert applied == bundled
        rows = await pool.fetch("SELECT version, checksum FROM schema_migrations ORDER BY 1")
        assert [(r["version"], r["checksum"]) for r in rows] == [
            (m.version, m.checksum) for m in bundled
        ]
        for table in GAME_TABLES:
            assert await pool.fetchval("SELECT to_regclass($1)::text", table) == table
        index = await pool.fetchval(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'tables_turn_deadline_idx'"
        )
        assert "WHERE ((status = 'active'::text) AND (turn_deadline IS NOT NULL))" in index
    finally:
        await pool.close()


async def test_game_schema_enforces_its_rules(fresh_dsn: str) -> None:
    conn = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(conn)
        table_id = await conn.fetchval(
            "INSERT INTO tables (ruleset, state) VALUES ('classic', '\\x00') RETURNING id"
        )
        await conn.execute(
            "INSERT INTO table_seats (table_id, seat, player_id) VALUES ($1, 0, 'p1')", table_id
        )
        await conn.execute(
            "INSERT INTO table_events (table_id, seq, version, kind, payload)"
            " VALUES ($1, 1, 1, 'x', '')",
            table_id,
        )
        with pytest.raises(asyncpg.PostgresError, match="append-only"):
            await conn.execute("UPDATE table_events SET kind = 'y' WHERE table_id = $1", table_id)
        with pytest.raises(asyncpg.CheckViolationError):
            await conn.execute("UPDATE tables SET status = 'finished' WHERE id = $1", table_id)
        await conn.execute(
            "UPDATE tables SET status = 'finished', finished_at = now() WHERE id = $1", table_id
        )
        with pytest.raises(asyncpg.CheckViolationError):
            await conn.execute(
                "INSERT INTO table_seats (table_id, seat, player_id) VALUES ($1, 6, 'p2')",
                table_id,
            )
        # Seats 0 to 5: tables of six (classic, contract).
        await conn.execute(
            "INSERT INTO table_seats (table_id, seat, player_id) VALUES ($1, 5, 'p6')", table_id
        )
        await conn.execute("INSERT INTO players (id, device_id) VALUES ('p1', 'd1')")
        with pytest.raises(asyncpg.UniqueViolationError):
            await conn.execute("INSERT INTO players (id, device_id) VALUES ('p2', 'd1')")
        assert await conn.fetchval("SELECT rating FROM players WHERE id = 'p1'") == 1500
        # Purging a finished table takes its seats and events with it.
        await conn.execute("DELETE FROM tables WHERE id = $1", table_id)
        assert await conn.fetchval("SELECT count(*) FROM table_events") == 0
    finally:
        await conn.close()


async def test_second_run_is_a_no_op(fresh_dsn: str) -> None:
    conn = await asyncpg.connect(fresh_dsn)
    try:
        assert await migrate(conn) != []
        before = await conn.fetch("SELECT * FROM schema_migrations ORDER BY version")
        assert await migrate(conn) == []
        assert await conn.fetch("SELECT * FROM schema_migrations ORDER BY version") == before
    finally:
        await conn.close()


async def test_concurrent_runs_apply_each_migration_once(fresh_dsn: str) -> None:
    # A slow extra migration widens the window in which replicas overlap; it
    # would fail on a second run since its table would already exist.
    migrations = [
        *load_migrations(),
        Migration.from_sql(9000, "slow", "SELECT pg_sleep(0.3); CREATE TABLE slow_marker ();"),
    ]
    conns = [await asyncpg.connect(fresh_dsn) for _ in range(5)]
    try:
        results = await asyncio.gather(*(migrate(c, migrations=migrations) for c in conns))
        applied = sorted(m.version for result in results for m in result)
        assert applied == [m.version for m in migrations]
        counts = await conns[0].fetch(
            "SELECT version, count(*) AS n FROM schema_migrations GROUP BY version ORDER BY 1"
        )
        assert [(r["version"], r["n"]) for r in counts] == [(m.version, 1) for m in migrations]
    finally:
        await asyncio.gather(*(c.close() for c in conns))


async def test_a_replica_waits_out_another_ones_migration_whatever_its_lock_timeout(
    fresh_dsn: str,
) -> None:
    """The game's pool bounds lock waits for moves; waiting for the replica that
    migrates is not one of them, and the pool's setting is back afterwards."""
    holder = await asyncpg.connect(fresh_dsn)
    pool = await open_pool(fresh_dsn, lock_timeout_s=0.1)
    try:
        await holder.execute("SELECT pg_advisory_lock($1)", LOCK_KEY)
        migrating = asyncio.create_task(migrate(pool))
        async with asyncio.timeout(60):
            while not await holder.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND datname = current_database()"
            ):
                assert not migrating.done(), migrating
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # waiting well past the pool's lock timeout
        assert not migrating.done(), "it gave up on the lock"
        await holder.execute("SELECT pg_advisory_unlock($1)", LOCK_KEY)
        assert await asyncio.wait_for(migrating, 60)
        async with pool.acquire() as con:
            assert await con.fetchval("SHOW lock_timeout") == "100ms"
    finally:
        await holder.close()
        await pool.close()


async def test_edited_migration_is_detected(fresh_dsn: str, tmp_path: Path) -> None:
    (tmp_path / "0001_first.sql").write_text("CREATE TABLE first (id int);\n")
    (tmp_path / "0002_second.sql").write_text("CREATE TABLE second (id int);\n")
    conn = await asyncpg.connect(fresh_dsn)
    try:
        assert len(await migrate(conn, migrations=load_migrations(tmp_path))) == 2
        (tmp_path / "0001_first.sql").write_text("CREATE TABLE first (id bigint);\n")
        (tmp_path / "0003_third.sql").write_text("CREATE TABLE third (id int);\n")
        with pytest.raises(ChecksumMismatchError, match="0001_first"):
            await migrate(conn, migrations=load_migrations(tmp_path))
        # Nothing after the detection ran.
        assert await conn.fetchval("SELECT to_regclass('third')") is None
        states = {
            s.version: s.state
            for s in await migration_status(conn, migrations=load_migrations(tmp_path))
        }
        assert states == {1: "edited", 2: "applied", 3: "pending"}
    finally:
        await conn.close()


async def test_failed_migration_rolls_back_alone(fresh_dsn: str, tmp_path: Path) -> None:
    (tmp_path / "0001_good.sql").write_text("CREATE TABLE good (id int);")
    (tmp_path / "0002_bad.sql").write_text("CREATE TABLE half (id int); SELECT 1/0;")
    conn = await asyncpg.connect(fresh_dsn)
    try:
        with pytest.raises(MigrationError, match="0002_bad"):
            await migrate(conn, migrations=load_migrations(tmp_path))
        assert await conn.fetchval("SELECT to_regclass('good')::text") == "good"
        assert await conn.fetchval("SELECT to_regclass('half')") is None
        assert await conn.fetchval("SELECT array_agg(version) FROM schema_migrations") == [1]
        # Fixing the file (never applied, so it may change) lets it through.
        (tmp_path / "0002_bad.sql").write_text("CREATE TABLE half (id int);")
        assert [m.version for m in await migrate(conn, migrations=load_migrations(tmp_path))] == [2]
    finally:
        await conn.close()


async def test_migrations_unknown_to_this_build_are_tolerated(fresh_dsn: str) -> None:
    newer = Migration.from_sql(9001, "from_the_future", "CREATE TABLE future ();")
    conn = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(conn, migrations=[*load_migrations(), newer])
        assert await migrate(conn) == []
        states = {s.version: s.state for s in await migration_status(conn)}
        assert states[9001] == "unknown"
    finally:
        await conn.close()


def test_file_names_and_versions_are_checked(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("not a migration")
    (tmp_path / "0001_a.sql").write_text("")
    assert [m.label for m in load_migrations(tmp_path)] == ["0001_a"]
    (tmp_path / "0001_b.sql").write_text("")
    with pytest.raises(MigrationError, match="two migration files"):
        load_migrations(tmp_path)
    (tmp_path / "0001_b.sql").unlink()
    (tmp_path / "2_c.sql").write_text("")
    with pytest.raises(MigrationError, match="NNNN_name"):
        load_migrations(tmp_path)


def test_checksum_ignores_line_endings() -> None:
    unix = Migration.from_sql(1, "a", "SELECT 1;\nSELECT 2;\n")
    windows = Migration.from_sql(1, "a", "SELECT 1;\r\nSELECT 2;\r\n")
    assert unix.checksum == windows.checksum


def test_command_line(fresh_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert migrate_cli.main(["--dsn", fresh_dsn, "--status"]) == 0
    assert "0001  pending  game_tables" in capsys.readouterr().out
    assert migrate_cli.main(["--dsn", fresh_dsn]) == 0
    assert "applied: 0001_game_tables" in capsys.readouterr().out
    assert migrate_cli.main(["--dsn", fresh_dsn]) == 0
    assert "up to date" in capsys.readouterr().out
    assert migrate_cli.main(["--dsn", fresh_dsn, "--status"]) == 0
    assert "0001  applied  game_tables" in capsys.readouterr().out


def test_migrate_keeps_the_embedded_data_where_the_servers_do(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every setting is an environment variable: `rummy-migrate` finds the embedded
    server's folder in RUMMY_DATA_DIR, as the servers do; `--data-dir` overrides it."""
    monkeypatch.setenv("RUMMY_DATA_DIR", "/srv/rummy/pg")
    assert migrate_cli.parser().parse_args([]).data_dir == "/srv/rummy/pg"
    assert migrate_cli.parser().parse_args(["--data-dir", "x"]).data_dir == "x"
    monkeypatch.delenv("RUMMY_DATA_DIR")
    assert migrate_cli.parser().parse_args([]).data_dir == str(DEFAULT_DATA_DIR)


async def test_elo_ratings_are_carried_over_to_plackett_luce(fresh_dsn: str) -> None:
    """0013_openskill: the mean is the former Elo rating; the deviation is
    `rating.carried_over_deviation` of the games behind it (`rating.games_behind`:
    the rated tables on record, or what the rating's distance from 1500 needs)."""
    before = [m for m in load_migrations() if m.version < 13]
    conn = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(conn, migrations=before)
        olds = {"new": 1500.0, "played": 1532.5, "purged": 1371.0, "trained": 1500.0}
        for player, old in olds.items():
            await conn.execute("INSERT INTO players (id, rating) VALUES ($1, $2)", player, old)
        on_record = {"played": 3, "purged": 1}

        async def finished(seated: list[str], *, bots: int = 0) -> None:
            table_id = await conn.fetchval(
                "INSERT INTO tables (ruleset, state, status, finished_at)"
                " VALUES ('cafe', '\\x00', 'finished', now()) RETURNING id"
            )
            for seat, player in enumerate([*seated, *(f"bot{i}" for i in range(bots))]):
                await conn.execute(
                    "INSERT INTO table_seats (table_id, seat, player_id, is_bot)"
                    " VALUES ($1, $2, $3, $4)",
                    table_id,
                    seat,
                    player,
                    seat >= len(seated),
                )

        await finished(["played", "purged"])
        await finished(["played", "x"])
        await finished(["played", "y", "z"])
        await finished(["trained"], bots=2)  # training tables rate nobody
        await finished(["trained", "played"], bots=1)
        await conn.execute(
            "INSERT INTO tables (ruleset, state) VALUES ('cafe', '\\x00')"
        )  # unfinished: not a game played
        await conn.execute(
            "INSERT INTO tickets (id, player_id, table_size, ruleset, options, family, mode,"
            " rating, expires_at) VALUES (gen_random_uuid(), 'played', 2, 'cafe', '{}',"
            " 'cafe|rating|{}', 'rating', 1532.5, now() + interval '1 minute')"
        )
        await migrate(conn)
        rows = await conn.fetch("SELECT id, rating, rating_deviation FROM players")
        carried = {r["id"]: (r["rating"], r["rating_deviation"]) for r in rows}
        for player, old in olds.items():
            mu, sigma = carried[player]
            assert mu == old
            games = rating.games_behind(old, on_record.get(player, 0))
            expected = rating.carried_over_deviation(games)
            assert math.isclose(sigma, expected, rel_tol=1e-12), (player, games, sigma)
        assert rating.games_behind(olds["purged"], 1) == 5, "more than on record"
        assert carried["new"][1] == carried["trained"][1]
        assert math.isclose(carried["new"][1], rating.DEFAULT_DEVIATION, rel_tol=1e-12)
        assert carried["purged"][1] < carried["played"][1] < rating.DEFAULT_DEVIATION
        # A new player, and a ticket queued before: the deviation follows.
        await conn.execute("INSERT INTO players (id) VALUES ('later')")
        later = await conn.fetchval("SELECT rating_deviation FROM players WHERE id = 'later'")
        assert math.isclose(later, rating.DEFAULT_DEVIATION, rel_tol=1e-12)
        ticket = await conn.fetchval("SELECT rating_deviation FROM tickets")
        assert ticket == carried["played"][1]
    finally:
        await conn.close()


async def test_ratings_become_per_rule_set_keeping_each_standings_rating(fresh_dsn: str) -> None:
    """0015_ruleset_ratings: each standing keeps the rating it holds (the player's
    single rating, copied there) and gets the deviation where it had none; the
    single rating stays in ``players`` as every unplayed rule set's start."""
    before = [m for m in load_migrations() if m.version < 15]
    conn = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(conn, migrations=before)
        await conn.execute(
            "INSERT INTO players (id, rating, rating_deviation) VALUES ('p', 1620, 75)"
        )
        for ruleset, deviation in (("cafe", 75.0), ("rami51", None)):
            await conn.execute(
                "INSERT INTO player_standings (player_id, ruleset, games, wins, streak,"
                " rated_games, rating, deviation, last_game_at)"
                " VALUES ('p', $1, 3, 2, 1, 3, 1620, $2, now())",
                ruleset,
                deviation,
            )
        await migrate(conn)
        rows = await conn.fetch(
            "SELECT ruleset, rating, deviation FROM player_standings ORDER BY ruleset"
        )
        assert [tuple(r) for r in rows] == [("cafe", 1620.0, 75.0), ("rami51", 1620.0, 75.0)]
        assert tuple(
            await conn.fetchrow("SELECT rating, rating_deviation FROM players WHERE id = 'p'")
        ) == (1620.0, 75.0)
        with pytest.raises(asyncpg.NotNullViolationError):
            await conn.execute("UPDATE player_standings SET deviation = NULL")
    finally:
        await conn.close()


async def test_rating_buckets_gain_a_fine_level_counted_from_the_standings(
    fresh_dsn: str,
) -> None:
    """0016_fine_rating_buckets: the kept whole-point buckets become level 0, and
    level 1 counts the ranked standings by 64ths of a point; the key takes the
    level, and a count may still go through -1 by upsert."""
    before = [m for m in load_migrations() if m.version < 16]
    conn = await asyncpg.connect(fresh_dsn)
    try:
        await migrate(conn, migrations=before)
        standings = [
            ("a", "cafe", 1500.0, 3),
            ("b", "cafe", 1500.01, 1),
            ("c", "cafe", 1500.015625, 2),  # 1500 + 1/64: the next fine bucket
            ("d", "cafe", 1500.99, 1),
            ("e", "cafe", 1501.0, 4),
            ("f", "cafe", 1499.5, 1),
            ("g", "cafe", 1600.0, 0),  # no rated game: not counted
            ("a", "rami51", 1500.0, 2),
        ]
        await conn.executemany(
            "INSERT INTO player_standings (player_id, ruleset, games, wins, streak,"
            " rated_games, rating, deviation, last_game_at)"
            " VALUES ($1, $2, $4 + 1, 0, -1, $4, $3, 80, now())",
            standings,
        )
        # The whole-point buckets as a game's end (or 0014) kept them.
        await conn.execute(
            "INSERT INTO rating_buckets (ruleset, bucket, players)"
            " SELECT ruleset, floor(rating)::bigint, count(*) FROM player_standings"
            " WHERE rated_games > 0 GROUP BY 1, 2"
        )
        await migrate(conn)
        rows = await conn.fetch(
            "SELECT ruleset, level, bucket, players FROM rating_buckets ORDER BY 1, 2, 3"
        )
        assert [tuple(r) for r in rows] == [
            ("cafe", 0, 1499, 1),
            ("cafe", 0, 1500, 4),
            ("cafe", 0, 1501, 1),
            ("cafe", 1, 1499 * 64 + 32, 1),
            ("cafe", 1, 1500 * 64, 2),
            ("cafe", 1, 1500 * 64 + 1, 1),
            ("cafe", 1, 1500 * 64 + 63, 1),
            ("cafe", 1, 1501 * 64, 1),
            ("rami51", 0, 1500, 1),
            ("rami51", 1, 1500 * 64, 1),
        ]
        leave = (
            "INSERT INTO rating_buckets AS b (ruleset, level, bucket, players)"
            " VALUES ('cafe', $1, $2, -1)"
            " ON CONFLICT (ruleset, level, bucket) DO UPDATE SET players = b.players - 1"
        )
        await conn.execute(leave, 1, 1500 * 64)
        await conn.execute(leave, 0, 1500 * 64)  # a level-0 row of that number: a new one
        counts = await conn.fetch(
            "SELECT level, players FROM rating_buckets WHERE ruleset = 'cafe' AND bucket = $1"
            " ORDER BY 1",
            1500 * 64,
        )
        assert [tuple(r) for r in counts] == [(0, -1), (1, 1)]
    finally:
        await conn.close()
