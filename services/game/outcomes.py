"""What a call on a table comes to: a `Refusal` (a gRPC code, a stable reason and
a sentence for the player), or what its transaction `Committed`."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

import grpc
from google.protobuf.message import Message

from services.common.wire.refusals import Refusal

from .rules.errors import Reason, RuleError
from .rules.events import Event
from .rules.state import GameState
from .seating import SeatPlayer

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


@dataclass(frozen=True, slots=True)
class Committed:
    """What one committed transaction left: the new state, seen by ``seat``."""

    table_id: uuid.UUID
    version: int
    last_seq: int
    state: GameState
    seat: int | None
    now_ms: int
    events: tuple[tuple[int, Event], ...]
    seats: tuple[SeatPlayer, ...] = ()
    """Who sits where (index = seat), when the transaction read it."""
    connected: tuple[int, ...] = ()
    """The seats told connected as of ``last_seq`` (`presence`); bots aside."""


Responder = Callable[[Committed], Message]
