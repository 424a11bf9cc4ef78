"""Asking the game service for the tables of recorded matches: CreateTables, 16
tables a call, or one CreateTable per table where the game service is older.

Both calls are idempotent (each table's id is chosen by the matcher and kept in
its match), so a table asked for again, by this replica or another, is made once.

The calls for the tables of a fresh claim wait for the game service to be
reachable (gRPC's wait_for_ready), up to a call's timeout and never past the time
their matches have left, rather than failing at once: the game service back
after an outage, they go through as soon as the channel connects again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import grpc
import structlog

from services.common.pb.rummy.internal.v1 import tables_pb2, tables_pb2_grpc

log = structlog.get_logger(__name__)

CALL_TIMEOUT_S = 10.0
"""The longest one call may take, waiting for the game service included."""
SHORTEST_CALL_S = 1.0
"""A call that waits for the game service is given at least this long."""
CREATE_BATCH = 16
"""Tables per CreateTables call: one call's overhead (gRPC, credential check) for
many tables, while a few calls in flight keep the game service's pool busy."""
CREATE_IN_FLIGHT = 4
"""CreateTables calls one replica keeps in flight (64 tables): a claim of hundreds
of tables queues here rather than on the game service, where calls time out or
are cancelled. Where the game service is older, as many tables in single calls."""
_STATUS_CODES = {code.value[0]: code for code in grpc.StatusCode}
PERMANENT = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.FAILED_PRECONDITION,
}
"""Refusals that asking again would not change. ALREADY_EXISTS among them: the
table id is taken, maybe by this very table made by an earlier call, which the
matcher then finds made (see `settling.made`)."""


class TableMaker:
    """One replica's calls to the game service that create tables."""

    def __init__(
        self,
        game: tables_pb2_grpc.TableServiceAsyncStub,
        credential: Callable[[], tuple[tuple[str, str], ...]],
    ) -> None:
        self._game = game
        self._credential = credential
        self._in_flight = asyncio.Semaphore(CREATE_IN_FLIGHT)
        self._singles = asyncio.Semaphore(CREATE_IN_FLIGHT * CREATE_BATCH)
        self._batched = True

    async def create_all(
        self, requests: list[tables_pb2.CreateTableRequest], *, ready_within_s: float = 0.0
    ) -> list[bool | None]:
        """Each table: True once it exists, False if refused for good, None to retry
        later. Asked in batches of CREATE_BATCH tables, a few batches at once.
        ``ready_within_s``: how long the calls may wait for the game service to be
        reachable (the time their matches have left); 0: they fail at once if it
        is not."""
        call = _Call(ready_within_s)
        batches = [requests[i : i + CREATE_BATCH] for i in range(0, len(requests), CREATE_BATCH)]
        outcomes = await asyncio.gather(*(self._create_batch(b, call) for b in batches))
        return [ok for batch in outcomes for ok in batch]

    async def _create_batch(
        self, requests: list[tables_pb2.CreateTableRequest], call: _Call
    ) -> list[bool | None]:
        if self._batched:
            async with self._in_flight:
                # Asked again: a batch that waited for its turn may find it known by now.
                outcomes = await self._create_together(requests, call) if self._batched else None
            if outcomes is not None:
                return outcomes
        # A game service older than this replica (mid-upgrade), or a reply that
        # could not be read: one call per table.
        return list(await asyncio.gather(*(self._create(r, call) for r in requests)))

    async def _create_together(
        self, requests: list[tables_pb2.CreateTableRequest], call: _Call
    ) -> list[bool | None] | None:
        """One CreateTables call; None from a game service that does not have it,
        or whose answer does not say what became of each table."""
        try:
            reply = await self._game.CreateTables(
                tables_pb2.CreateTablesRequest(tables=requests),
                metadata=self._credential(),
                timeout=call.timeout_s,
                wait_for_ready=call.wait,
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                self._batched = False
                return None
            log.warning("create_tables_failed", tables=len(requests), code=error.code().name)
            permanent = error.code() in PERMANENT
            return [False if permanent else None] * len(requests)
        if len(reply.results) != len(requests):
            # The answers cannot be paired with the tables: ask for each alone.
            log.error(
                "create_tables_answer_unreadable", tables=len(requests), results=len(reply.results)
            )
            return None
        outcomes: list[bool | None] = []
        for request, result in zip(requests, reply.results, strict=True):
            if result.HasField("table"):
                outcomes.append(True)
                continue
            code = _STATUS_CODES.get(result.refused.code, grpc.StatusCode.UNKNOWN)
            log.warning(
                "create_table_failed",
                table_id=request.table_id,
                code=code.name,
                detail=result.refused.message,
            )
            outcomes.append(False if code in PERMANENT else None)
        return outcomes

    async def _create(self, request: tables_pb2.CreateTableRequest, call: _Call) -> bool | None:
        """One table by itself (CreateTable): as `create_all` says."""
        try:
            async with self._singles:
                await self._game.CreateTable(
                    request,
                    metadata=self._credential(),
                    timeout=call.timeout_s,
                    wait_for_ready=call.wait,
                )
            return True
        except grpc.aio.AioRpcError as error:
            log.warning(
                "create_table_failed",
                table_id=request.table_id,
                code=error.code().name,
                detail=error.details(),
            )
            return False if error.code() in PERMANENT else None


class _Call:
    """How long the calls of one `create_all` may wait, and take."""

    __slots__ = ("timeout_s", "wait")

    def __init__(self, ready_within_s: float) -> None:
        self.wait = ready_within_s > 0
        """Wait for the game service to be reachable, or fail at once if it is not."""
        self.timeout_s = (
            min(CALL_TIMEOUT_S, max(SHORTEST_CALL_S, ready_within_s))
            if self.wait
            else CALL_TIMEOUT_S
        )
