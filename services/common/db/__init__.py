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
from .purge import purge_in_batches
from .resolve import resolve_database
from .statement import Statement

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
    "Statement",
    "database_name",
    "load_migrations",
    "migrate",
    "migration_status",
    "open_pool",
    "purge_in_batches",
    "resolve_database",
    "with_database",
]
