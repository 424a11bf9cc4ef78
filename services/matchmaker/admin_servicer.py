"""`rummy.admin.v1.QueueAdminService`: the queues, for the people who run the
service. Operator tokens only; every call is logged with who made it
(`services.common.admin_calls`)."""

from __future__ import annotations

from typing import Any

import grpc

from services.common.admin_calls import MAX_REASON, AdminCall, reason_text
from services.common.db import Pool
from services.common.pb.rummy.admin.v1 import admin_pb2, admin_pb2_grpc
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from . import admin_queues

MAX_TICKETS_PER_QUEUE = 100
MAX_PLAYER_ID = 128


class QueueAdminServicer(admin_pb2_grpc.QueueAdminServiceServicer):
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def ListQueues(
        self, request: admin_pb2.ListQueuesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.ListQueuesResponse:
        async def work() -> admin_pb2.ListQueuesResponse:
            if request.tickets_per_queue > MAX_TICKETS_PER_QUEUE:
                raise Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    ServiceReason.FILTER_INVALID,
                    f"List at most {MAX_TICKETS_PER_QUEUE} tickets of each queue.",
                )
            return await admin_queues.list_queues(self._pool, request.tickets_per_queue)

        return await AdminCall(context, "ListQueues").run(
            work,
            lambda found: {"queues": len(found.queues)},
            tickets_per_queue=request.tickets_per_queue,
        )

    async def RemoveTickets(
        self, request: admin_pb2.RemoveTicketsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.RemoveTicketsResponse:
        async def work() -> admin_pb2.RemoveTicketsResponse:
            player = request.player_id
            if not player or len(player) > MAX_PLAYER_ID or not player.isprintable():
                raise Refusal(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    ServiceReason.PLAYER_ID_INVALID,
                    "Name the player whose tickets to remove by their player id.",
                )
            reason = reason_text(request.reason, required=False)
            done = await admin_queues.remove_tickets(self._pool, player, reason)
            return admin_pb2.RemoveTicketsResponse(
                removed=[str(t) for t in done.removed],
                still_matching=[str(t) for t in done.still_matching],
            )

        return await AdminCall(context, "RemoveTickets").run(
            work,
            lambda done: {
                "removed": list(done.removed),
                "still_matching": list(done.still_matching),
            },
            player_id=request.player_id[:MAX_PLAYER_ID],
            reason=request.reason[: 2 * MAX_REASON],
        )
