"""Schema migrations: numbered SQL files, applied once each, in order, at start-up.

Files live in `services/common/migrations/` and are named `NNNN_name.sql`.
Each runs in its own transaction together with its row in
`schema_migrations`, so it is applied entirely or not at all; a file must
therefore not contain transaction control (BEGIN/COMMIT) nor statements that
cannot run in a transaction (CREATE INDEX CONCURRENTLY). An applied file is
never edited: its checksum is recorded and checked on every start, and a
change is an error. Fix forward with a new file.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

import asyncpg

from .pool import Connection, Pool

log = logging.getLogger(__name__)

_FILE_NAME = re.compile(r"(?P<version>\d{4})_(?P<name>[a-z0-9_]+)\.sql")

# One key for every replica: whoever holds it migrates while the others wait.
LOCK_KEY = int.from_bytes(
    hashlib.sha256(b"rummy:schema_migrations").digest()[:8], "big", signed=True
)

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


class MigrationError(RuntimeError):
    """The schema could not be brought up to date."""


class ChecksumMismatchError(MigrationError):
    """A migration that was already applied has since been edited."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str
    checksum: str

    @classmethod
    def from_sql(cls, version: int, name: str, sql: str) -> Migration:
        # Line endings are normalised so a Windows checkout does not look edited.
        text = sql.replace("\r\n", "\n")
        return cls(version, name, text, hashlib.sha256(text.encode()).hexdigest())

    @property
    def label(self) -> str:
        return f"{self.version:04d}_{self.name}"


@dataclass(frozen=True)
class MigrationStatus:
    version: int
    name: str
    state: Literal["applied", "pending", "edited", "unknown"]
    applied_at: datetime | None


@dataclass(frozen=True)
class _Applied:
    name: str
    checksum: str
    applied_at: datetime


def load_migrations(folder: Traversable | str | os.PathLike[str] | None = None) -> list[Migration]:
    """Read the migration files of `folder` (default: the bundled ones), by version."""
    if folder is None:
        root: Traversable = resources.files("services.common") / "migrations"
    elif isinstance(folder, str | os.PathLike):
        root = Path(folder)
    else:
        root = folder
    found: dict[int, Migration] = {}
    for entry in root.iterdir():
        if not entry.name.endswith(".sql"):
            continue
        match = _FILE_NAME.fullmatch(entry.name)
        if match is None:
            raise MigrationError(f"migration file {entry.name!r} is not named NNNN_name.sql")
        version = int(match["version"])
        if version in found:
            raise MigrationError(f"two migration files have version {version:04d}")
        found[version] = Migration.from_sql(
            version, match["name"], entry.read_text(encoding="utf-8")
        )
    return [found[v] for v in sorted(found)]


async def migrate(
    db: Pool | Connection,
    *,
    migrations: Sequence[Migration] | None = None,
    lock_timeout: float = 600.0,
    statement_timeout: float = 600.0,
) -> list[Migration]:
    """Apply pending migrations; return those this call applied.

    Safe to run from many replicas at once: a PostgreSQL advisory lock lets
    one migrate while the others wait, then find nothing left to do. The
    timeouts replace the pool's command timeout, which suits queries, not
    schema changes or waiting for another replica.
    """
    wanted = sorted(load_migrations() if migrations is None else migrations, key=_version)
    applied_now: list[Migration] = []
    async with _connection(db) as conn:
        if conn.is_in_transaction():
            raise MigrationError("migrate() needs a connection that is not in a transaction")
        # The waits below are bounded by `lock_timeout` (the call's), not the pool's
        # own setting for moves: RESET gives the session its setting back after.
        await conn.execute("SET lock_timeout = 0")
        try:
            async with _advisory_lock(conn, lock_timeout):
                await conn.execute(_CREATE_TABLE)
                applied = await _applied(conn)
                _verify(wanted, applied)
                for migration in wanted:
                    if migration.version not in applied:
                        await _apply(conn, migration, statement_timeout)
                        applied_now.append(migration)
        finally:
            if not conn.is_closed():  # else the error that closed it is the one to see
                await conn.execute("RESET lock_timeout")
    return applied_now


async def migration_status(
    db: Pool | Connection, *, migrations: Sequence[Migration] | None = None
) -> list[MigrationStatus]:
    """Every known or applied migration with its state, by version (read-only)."""
    wanted = {m.version: m for m in (load_migrations() if migrations is None else migrations)}
    async with _connection(db) as conn:
        exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
        applied = await _applied(conn) if exists else {}
    statuses = []
    for version in sorted(wanted.keys() | applied.keys()):
        known, row = wanted.get(version), applied.get(version)
        if row is None:
            assert known is not None
            statuses.append(MigrationStatus(version, known.name, "pending", None))
        elif known is None:
            statuses.append(MigrationStatus(version, row.name, "unknown", row.applied_at))
        else:
            state: Literal["applied", "edited"] = (
                "applied" if row.checksum == known.checksum else "edited"
            )
            statuses.append(MigrationStatus(version, known.name, state, row.applied_at))
    return statuses


def _version(migration: Migration) -> int:
    return migration.version


@asynccontextmanager
async def _connection(db: Pool | Connection) -> AsyncIterator[Connection]:
    if isinstance(db, asyncpg.Pool):
        async with db.acquire() as conn:
            yield conn
    else:
        yield db


@asynccontextmanager
async def _advisory_lock(conn: Connection, timeout: float) -> AsyncIterator[None]:
    # A session lock, not a transaction one: it must span several transactions.
    await conn.execute("SELECT pg_advisory_lock($1)", LOCK_KEY, timeout=timeout)
    try:
        yield
    finally:
        if not conn.is_closed():
            await conn.execute("SELECT pg_advisory_unlock($1)", LOCK_KEY)


async def _applied(conn: Connection) -> dict[int, _Applied]:
    rows = await conn.fetch("SELECT version, name, checksum, applied_at FROM schema_migrations")
    return {r["version"]: _Applied(r["name"], r["checksum"], r["applied_at"]) for r in rows}


def _verify(wanted: Sequence[Migration], applied: dict[int, _Applied]) -> None:
    edited = [m.label for m in wanted if _edited(m, applied.get(m.version))]
    if edited:
        raise ChecksumMismatchError(
            f"applied migrations were edited since: {', '.join(edited)}; "
            "restore them and add a new migration instead"
        )
    unknown = sorted(applied.keys() - {m.version for m in wanted})
    if unknown:
        # A newer release migrated this database (e.g. mid rolling update).
        # Migrations are written to stay compatible with the previous release.
        log.warning("database has migrations this build does not know: %s", unknown)


def _edited(migration: Migration, row: _Applied | None) -> bool:
    return row is not None and row.checksum != migration.checksum


async def _apply(conn: Connection, migration: Migration, timeout: float) -> None:
    started = time.monotonic()
    try:
        async with conn.transaction():
            await conn.execute(migration.sql, timeout=timeout)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.checksum,
            )
    except asyncpg.PostgresError as exc:
        raise MigrationError(f"migration {migration.label} failed: {exc}") from exc
    elapsed_ms = (time.monotonic() - started) * 1000
    log.info("applied migration %s in %.0f ms", migration.label, elapsed_ms)
