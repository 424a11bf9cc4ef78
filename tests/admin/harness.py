"""The admin services' clients for the tests: an operator's token and stubs."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import grpc
from structlog.typing import EventDict

from services.common.auth import issue_operator_token
from services.common.pb.rummy.admin.v1 import admin_pb2_grpc
from tests.game.harness import SECRET

OPERATOR = "alice"


def operator_auth(name: str = OPERATOR) -> tuple[tuple[str, str]]:
    token = issue_operator_token(name, secret=SECRET, now=time.time())
    return (("authorization", f"Bearer {token}"),)


def tables_admin(channel: grpc.aio.Channel) -> admin_pb2_grpc.TableAdminServiceAsyncStub:
    return admin_pb2_grpc.TableAdminServiceStub(channel)


def queues_admin(channel: grpc.aio.Channel) -> admin_pb2_grpc.QueueAdminServiceAsyncStub:
    return admin_pb2_grpc.QueueAdminServiceStub(channel)


def admin_lines(logs: Sequence[EventDict], action: str, **fields: Any) -> list[EventDict]:
    """The ``admin_action`` lines of ``action`` that hold ``fields``."""
    return [
        line
        for line in logs
        if line.get("event") == "admin_action"
        and line.get("action") == action
        and all(line.get(k) == v for k, v in fields.items())
    ]


@asynccontextmanager
async def database(dsn: str) -> AsyncIterator[asyncpg.Connection]:
    """A connection of the test's own, to set a scene or read what was stored."""
    con = await asyncpg.connect(dsn)
    try:
        yield con
    finally:
        await con.close()
