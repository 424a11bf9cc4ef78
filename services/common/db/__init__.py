"""PostgreSQL access: pools, the embedded development server, migrations."""

from .embedded import DEFAULT_DATA_DIR, EmbeddedPostgres, EmbeddedPostgresError
from .migrations import (
    ChecksumMismatchError,
    Migration,
    MigrationError,
    MigrationStatus,
    load_migrations,
    migrate,
    migration_status,
)
from .pool import Connection, Pool, database_name, open_pool, with_database
from .resolve import resolve_database

__all__ = [
    "DEFAULT_DATA_DIR",
    "ChecksumMismatchError",
    "Connection",
    "EmbeddedPostgres",
    "EmbeddedPostgresError",
    "Migration",
    "MigrationError",
    "MigrationStatus",
    "Pool",
    "database_name",
    "load_migrations",
    "migrate",
    "migration_status",
    "open_pool",
    "resolve_database",
    "with_database",
]
