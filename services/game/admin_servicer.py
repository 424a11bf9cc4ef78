"""`rummy.admin.v1.TableAdminService`: the tables, for the people who run the
service. Operator tokens only; every call is logged with who made it
(`services.common.admin_calls`)."""

from __future__ import annotations

from typing import Any

import grpc
from google.protobuf.duration_pb2 import Duration

from services.common.admin_calls import MAX_REASON, AdminCall, reason_text
from services.common.db import Pool
from services.common.pb.rummy.admin.v1 import admin_pb2, admin_pb2_grpc
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import admin_queries
from .admin_ending import end_table
from .admin_queries import MAX_LOG_EVENTS, TableFilter
from .request_parsing import table_id_of
from .rules.events import GameEnded
from .tables import Tables

DEFAULT_TABLES = 50
MAX_TABLES = 500
_STATUS = {
    admin_pb2.TABLE_STATE_UNSPECIFIED: None,
    admin_pb2.TABLE_STATE_ACTIVE: "active",
    admin_pb2.TABLE_STATE_FINISHED: "finished",
}


def _seconds(duration: Duration, name: str) -> float:
    seconds = duration.seconds + duration.nanos / 1e9
    if seconds < 0:
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.FILTER_INVALID,
            f"An age to list tables by cannot be negative ({name}).",
        )
    return seconds


def table_filter(request: admin_pb2.ListTablesRequest) -> TableFilter:
    if request.state not in _STATUS:
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.FILTER_INVALID,
            "That table state is not one this server knows.",
        )
    if request.limit > MAX_TABLES:
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.FILTER_INVALID,
            f"List at most {MAX_TABLES} tables at a time.",
        )
    return TableFilter(
        status=_STATUS[request.state],
        older_than_s=(
            _seconds(request.older_than, "older_than") if request.HasField("older_than") else None
        ),
        idle_s=_seconds(request.idle_for, "idle_for") if request.HasField("idle_for") else None,
        limit=request.limit or DEFAULT_TABLES,
    )


class TableAdminServicer(admin_pb2_grpc.TableAdminServiceServicer):
    def __init__(self, tables: Tables, pool: Pool) -> None:
        self._tables = tables
        self._pool = pool

    def _call(self, context: grpc.aio.ServicerContext[Any, Any], action: str) -> AdminCall:
        return AdminCall(context, action)

    async def ListTables(
        self, request: admin_pb2.ListTablesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.ListTablesResponse:
        async def work() -> admin_pb2.ListTablesResponse:
            return await admin_queries.list_tables(self._pool, table_filter(request))

        return await self._call(context, "ListTables").run(
            work,
            lambda found: {"tables": len(found.tables)},
            state=request.state,
            older_than_s=request.older_than.seconds if request.HasField("older_than") else None,
            idle_s=request.idle_for.seconds if request.HasField("idle_for") else None,
        )

    async def GetTableLog(
        self, request: admin_pb2.GetTableLogRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.GetTableLogResponse:
        async def work() -> admin_pb2.GetTableLogResponse:
            table_id = table_id_of(request.table_id)
            if request.limit > MAX_LOG_EVENTS:
                raise Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    ServiceReason.FILTER_INVALID,
                    f"Read at most {MAX_LOG_EVENTS} events at a time.",
                )
            return await admin_queries.table_log(
                self._tables,
                self._pool,
                table_id,
                after_seq=request.after_seq,
                limit=request.limit or MAX_LOG_EVENTS,
            )

        return await self._call(context, "GetTableLog").run(
            work,
            lambda log: {"events": len(log.events)},
            table_id=request.table_id[:64],
            after_seq=request.after_seq,
        )

    async def EndTable(
        self, request: admin_pb2.EndTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.EndTableResponse:
        async def work() -> admin_pb2.EndTableResponse:
            table_id = table_id_of(request.table_id)
            note = reason_text(request.reason, required=True)
            committed = await end_table(self._tables, table_id, note)
            return admin_pb2.EndTableResponse(
                table=await admin_queries.table_summary(self._pool, table_id),
                ended_seq=next(s for s, e in committed.events if isinstance(e, GameEnded)),
            )

        return await self._call(context, "EndTable").run(
            work,
            lambda ended: {"ended_seq": ended.ended_seq},
            table_id=request.table_id[:64],
            reason=request.reason[: 2 * MAX_REASON],
        )
