"""What a call answers when the work below it fails with an exception it
expects: a refusal as it is, a database error as the refusal it amounts to.
Both services' calls, the operators' too, answer alike."""

from __future__ import annotations

import asyncpg
import grpc

from services.common.errors import DB_ERRORS
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal


def refusal_of_failure(error: Exception) -> Refusal | None:
    """The refusal a call gets for an exception from below, if it is one we expect."""
    if isinstance(error, Refusal):
        return error
    if isinstance(error, asyncpg.DataError):
        # A value the database cannot hold (a NUL in a text, say) that no check
        # above caught: the request is at fault, not the server.
        return Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.MALFORMED_REQUEST,
            "The request holds a value the game cannot store.",
        )
    if isinstance(
        error,
        asyncpg.SerializationError
        | asyncpg.DeadlockDetectedError
        # Two creates of one table id at once: the loser retries and gets the same answer.
        | asyncpg.UniqueViolationError,
    ):
        return Refusal(
            grpc.StatusCode.ABORTED,
            ServiceReason.CONFLICT,
            "Another move got there first: try again.",
        )
    if isinstance(error, DB_ERRORS):
        return Refusal(
            grpc.StatusCode.UNAVAILABLE,
            ServiceReason.DATABASE_UNAVAILABLE,
            "The game is briefly unavailable: try again in a moment.",
        )
    return None
