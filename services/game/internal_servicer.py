"""`rummy.internal.v1.TableService`: the tables the matchmaker asks for, made for
the service credential alone (no app calls it)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import grpc
import structlog

from services.common import errors
from services.common.failures import refusal_of_failure
from services.common.identity import require_service
from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc
from services.common.wire import options
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .failures import guard
from .request_parsing import Malformed, bot_level_of, check_request_id, seat_players, table_id_of
from .tables import Tables

log = structlog.get_logger(__name__)
CREATED_BY_REQUEST = uuid.UUID("5b0e7f3c-2d61-4c9a-9f1e-6a3d8c7b4e21")
"""Namespace of the table ids CreateTable derives from its caller and request id
when it is given no table id (UUID version 5)."""
TABLES_PER_CALL = 32
"""CreateTables: the most tables one call makes (each holds a pool connection a
moment). The largest such call still fits a request's size limit (checked by a test)."""


class TableServicer(tables_pb2_grpc.TableServiceServicer):
    def __init__(self, tables: Tables) -> None:
        self._tables = tables

    async def CreateTable(
        self, request: tables_pb2.CreateTableRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tables_pb2.CreateTableResponse:
        claims = await require_service(context)
        return await guard(context, self._create(request, claims.subject))

    async def CreateTables(
        self, request: tables_pb2.CreateTablesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> tables_pb2.CreateTablesResponse:
        claims = await require_service(context)
        if not 1 <= len(request.tables) <= TABLES_PER_CALL:
            await errors.abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.TABLES_PER_CALL,
                f"Create 1 to {TABLES_PER_CALL} tables per call.",
            )
        results = await asyncio.gather(
            *(self._create_one(t, claims.subject) for t in request.tables)
        )
        return tables_pb2.CreateTablesResponse(results=results)

    async def _create_one(
        self, request: tables_pb2.CreateTableRequest, caller: str
    ) -> tables_pb2.CreateTableResult:
        try:
            return tables_pb2.CreateTableResult(table=await self._create(request, caller))
        except Exception as error:
            refusal = refusal_of_failure(error)
            if refusal is None:
                # A fault of this table's alone: the other tables' answers still go back.
                log.error("create_table_failed", exc_info=error)
                refusal = Refusal(
                    grpc.StatusCode.INTERNAL, ServiceReason.INTERNAL, errors.INTERNAL_MESSAGE
                )
            return tables_pb2.CreateTableResult(
                refused=tables_pb2.TableRefusal(
                    code=refusal.code.value[0], reason=refusal.reason, message=refusal.message
                )
            )

    async def _create(
        self, request: tables_pb2.CreateTableRequest, caller: str
    ) -> tables_pb2.CreateTableResponse:
        try:
            table_options = options.from_message(request.options)
        except ValueError as error:
            raise Malformed(ServiceReason.OPTIONS_INVALID, str(error)) from None
        players = seat_players(request.players)
        bot_level = bot_level_of(request.bot_level, players)
        check_request_id(request.request_id)
        table_id = None
        if request.table_id:
            table_id = table_id_of(request.table_id)
        elif request.request_id:
            # The request id names the table: a retry finds the table the first made.
            table_id = uuid.uuid5(CREATED_BY_REQUEST, f"{caller}\n{request.request_id}")
        committed = await self._tables.creation.create(
            request.ruleset or "cafe",
            table_options,
            players,
            deck_order=list(request.deck_order),
            table_id=table_id,
            bot_level=bot_level,
        )
        return tables_pb2.CreateTableResponse(
            table_id=str(committed.table_id), version=committed.version
        )
