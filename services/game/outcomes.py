"""A call on a table refused: a `Refusal` (a gRPC code, a stable reason and a
sentence for the player), and the refusal of each engine `RuleError`. What a
call commits is a `records.Committed`."""

from __future__ import annotations

import grpc

from services.common.wire.refusals import Refusal

from .rules.errors import Reason, RuleError

_CODES = {
    Reason.NOT_SEATED: grpc.StatusCode.PERMISSION_DENIED,
    Reason.CARD_UNKNOWN: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.CARD_DUPLICATED: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.ACTION_UNKNOWN: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.DECK_INVALID: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.MELD_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    # A lost race with the table, as a stale version is: look again, then decide.
    Reason.CLAIM_CARD_CHANGED: grpc.StatusCode.ABORTED,
    Reason.CLAIM_WINDOW_CLOSED: grpc.StatusCode.ABORTED,
}


def refusal_of(error: RuleError) -> Refusal:
    code = _CODES.get(error.reason, grpc.StatusCode.FAILED_PRECONDITION)
    return Refusal(code, error.reason.value, error.message)
