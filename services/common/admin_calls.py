"""What the admin services (`rummy.admin.v1`) share: only an operator may call
them (`identity.require_operator`), the words an operator gives the players are
checked alike, and every call leaves a line in the log saying who made it, what
they asked and how it ended."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
import structlog

from services.common import errors
from services.common.failures import refusal_of_failure
from services.common.identity import require_operator
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

T = TypeVar("T")
log = structlog.get_logger(__name__)

MAX_REASON = 200
"""The longest an operator's words to the players may be (characters)."""


def reason_text(text: str, *, required: bool) -> str:
    """An operator's words to the players, trimmed; ADMIN_REASON_INVALID unless
    they are printable, at most `MAX_REASON` characters, and given if ``required``."""
    text = text.strip()
    if (required and not text) or len(text) > MAX_REASON or not text.isprintable():
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.ADMIN_REASON_INVALID,
            f"Say why in {1 if required else 0} to {MAX_REASON} printable characters,"
            " on one line: the players are shown it as it is.",
        )
    return text


class AdminCall:
    """One admin call, made by an operator and logged as ``admin_action``: who
    (``operator``), the call (``action``), what it asked and how it ended
    (``outcome``: ``done``, or the reason it was refused for)."""

    def __init__(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        action: str,
    ) -> None:
        self._context = context
        self._action = action

    async def run(
        self,
        work: Callable[[], Awaitable[T]],
        done: Callable[[T], dict[str, Any]],
        **asked: Any,
    ) -> T:
        """``work`` for the operator calling (anyone else is refused, and logged);
        ``done`` says what to log of its result, ``asked`` what was asked."""
        operator = await require_operator(self._context)
        bound = log.bind(operator=operator.subject, action=self._action, **asked)
        try:
            result = await work()
        except Exception as error:
            refusal = refusal_of_failure(error)
            if refusal is None:
                bound.error("admin_action", outcome=ServiceReason.INTERNAL.value)
                raise
            bound.info("admin_action", outcome=refusal.reason)
            await errors.abort(
                self._context,
                refusal.code,
                refusal.reason,
                refusal.message,
                metadata=refusal.metadata,
            )
        bound.info("admin_action", outcome="done", **done(result))
        return result
