"""`migrate`: bring the database schema up to date, or show where it stands.

The servers migrate at start-up anyway; this command is for doing it ahead
of a deployment (e.g. as a Kubernetes Job) and for looking.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

import asyncpg

from services.common import eventloop
from services.common.db import (
    DEFAULT_DATA_DIR,
    MigrationError,
    migrate,
    migration_status,
    resolve_database,
)


def parser() -> argparse.ArgumentParser:
    """The command's options; the data folder's default is the servers' own setting."""
    parser = argparse.ArgumentParser(
        description="Apply pending schema migrations. Uses DATABASE_URL, or the "
        "embedded PostgreSQL when it is unset.",
    )
    parser.add_argument("--dsn", help="postgresql:// URL (default: DATABASE_URL)")
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("RUMMY_DATA_DIR", "").strip() or str(DEFAULT_DATA_DIR),
        help="embedded server's data folder when no URL is given"
        f" (default: $RUMMY_DATA_DIR, else {DEFAULT_DATA_DIR})",
    )
    parser.add_argument(
        "--status", action="store_true", help="list migrations and their state; change nothing"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    try:
        return eventloop.run(_run(args))
    except (MigrationError, asyncpg.PostgresError, OSError) as exc:
        print(f"migrate: {exc}", file=sys.stderr)
        return 1


async def _run(args: argparse.Namespace) -> int:
    environ = {"DATABASE_URL": args.dsn} if args.dsn else None
    async with resolve_database(environ=environ, data_dir=args.data_dir) as dsn:
        conn = await asyncpg.connect(dsn)
        try:
            if args.status:
                statuses = await migration_status(conn)
                for s in statuses:
                    when = s.applied_at.isoformat(timespec="seconds") if s.applied_at else ""
                    print(f"{s.version:04d}  {s.state:<8} {s.name:<40} {when}".rstrip())
                return 1 if any(s.state == "edited" for s in statuses) else 0
            applied = await migrate(conn)
        finally:
            await conn.close()
    if applied:
        print("applied: " + ", ".join(m.label for m in applied))
    else:
        print("schema is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
