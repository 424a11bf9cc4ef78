"""A GameService call whose work below fails: the refusal it amounts to
(`services.common.failures`), as a rich status."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from services.common import errors
from services.common.failures import refusal_of_failure

Resp = TypeVar("Resp", bound=Message)


async def guard(context: grpc.aio.ServicerContext[Any, Any], call: Awaitable[Resp]) -> Resp:
    """Run a call; refusals and outages become rich statuses."""
    try:
        return await call
    except Exception as error:
        refusal = refusal_of_failure(error)
        if refusal is None:
            raise
        await errors.abort(context, refusal.code, refusal.reason, refusal.message)
