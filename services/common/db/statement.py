"""SQL written with named parameters, sent with asyncpg's numbered ones."""

from __future__ import annotations

import re

import asyncpg

from .pool import Connection, Pool

_NAMED = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")
"""``:name``, but not a cast (``$1::int``, ``:state::bytea``)."""


class Statement:
    """A statement whose parameters have names (``:table_id``). `sql` is what
    asyncpg is sent (``$1``... in order of first use); a call names every value
    (`fetchrow(con, table_id=...)`), and `args` alone puts them in that order, so
    no call passes a row of unnamed values."""

    __slots__ = ("names", "sql")

    def __init__(self, text: str) -> None:
        names: list[str] = []

        def numbered(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in names:
                names.append(name)
            return f"${names.index(name) + 1}"

        self.sql = _NAMED.sub(numbered, text)
        self.names = tuple(names)

    def __str__(self) -> str:
        return self.sql

    def args(self, **values: object) -> list[object]:
        """The values in the order the SQL numbers them; every name, and no other."""
        try:
            if len(values) == len(self.names):
                return [values[name] for name in self.names]
        except KeyError:
            pass
        missing = sorted(set(self.names) - values.keys())
        unknown = sorted(values.keys() - set(self.names))
        raise TypeError(f"statement values: missing {missing}, unknown {unknown}")

    async def fetchrow(
        self, db: Connection | Pool, *, timeout: float | None = None, **values: object
    ) -> asyncpg.Record | None:
        return await db.fetchrow(self.sql, *self.args(**values), timeout=timeout)

    async def fetch(self, db: Connection | Pool, **values: object) -> list[asyncpg.Record]:
        return await db.fetch(self.sql, *self.args(**values))

    async def fetchval(self, db: Connection | Pool, **values: object) -> object:
        return await db.fetchval(self.sql, *self.args(**values))

    async def execute(self, db: Connection | Pool, **values: object) -> str:
        return await db.execute(self.sql, *self.args(**values))
