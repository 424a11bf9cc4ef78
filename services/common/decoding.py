"""Requests read leniently: too large or undecodable ones become markers the
interceptor refuses with a reason, rather than gRPC failing the call with
RESOURCE_EXHAUSTED or UNKNOWN."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf.message import DecodeError

MAX_REQUEST_BYTES = 64 * 1024
"""Far above a player's request (a few hundred bytes) or the matchmaker's largest
CreateTables (32 tables): anything bigger is refused unparsed. gRPC reads a little
more (`serving.MAX_RECEIVE_BYTES`), so that such a request gets a reason."""

MALFORMED = object()
"""What an undecodable request becomes, so it is refused as INVALID_ARGUMENT
rather than failing inside gRPC with UNKNOWN."""
TOO_LARGE = object()
"""What a request over `MAX_REQUEST_BYTES` becomes, unparsed."""


def tolerant_decoder(decode: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if decode is None:
        return None

    def tolerant(data: bytes) -> Any:
        if len(data) > MAX_REQUEST_BYTES:
            return TOO_LARGE
        try:
            return decode(data)
        except DecodeError:
            return MALFORMED

    return tolerant
