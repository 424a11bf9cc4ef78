"""Pages of PlayerService's lists (AIP-158): their sizes and their tokens.

A token is where the last page ended (its last item's sort key), with what it
is a page of (the list, and the request's other fields that chose it), as
base64url JSON: opaque to clients, read back strictly. A page starts after
that key, never at an offset, so items added or removed meanwhile never shift
the next page: none is skipped or repeated. Tokens are not secret and need
not be: every read checks who may see what whatever the token says.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import grpc
import orjson

from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

MAX_TOKEN = 512
"""Characters: a token this service made is far shorter."""
LARGEST = 2**53
"""No number in a key is larger (sequence numbers, ranks, ratings, times in µs):
past it, a number is no key of ours, and would not fit the database's types."""


@dataclass(frozen=True, slots=True)
class PageSizes:
    """A list's default and largest page."""

    default: int
    most: int

    def of(self, asked: int) -> int:
        """The page size to serve for ``asked`` (AIP-158: 0 is the default, more
        than the most is the most, negative is refused)."""
        if asked < 0:
            raise Refusal(
                grpc.StatusCode.INVALID_ARGUMENT,
                ServiceReason.PAGE_SIZE_INVALID,
                f"The page size cannot be negative; ask for 0 (the default, {self.default})"
                f" to {self.most} items.",
            )
        return min(asked, self.most) if asked else self.default


def encode(kind: str, *key: object) -> str:
    """The token of a page of ``kind`` that ended at ``key``."""
    return base64.urlsafe_b64encode(orjson.dumps([kind, *key])).decode().rstrip("=")


def decode(token: str, kind: str, shape: Sequence[type]) -> list[Any]:
    """The key a token of ``kind`` holds, each value of the type ``shape`` says;
    PAGE_TOKEN_INVALID for anything else (another list's token included)."""
    try:
        if len(token) > MAX_TOKEN:
            raise ValueError("too long")
        padded = token + "=" * (-len(token) % 4)
        values = orjson.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeEncodeError, binascii.Error, orjson.JSONDecodeError):
        raise invalid() from None
    if not isinstance(values, list) or len(values) != len(shape) + 1 or values[0] != kind:
        raise invalid()
    key = values[1:]
    for value, wanted in zip(key, shape, strict=True):
        # bool is an int to Python, and an int a float to JSON's readers: neither passes.
        if type(value) is not wanted and not (wanted is float and type(value) is int):
            raise invalid()
        if isinstance(value, int | float) and not -LARGEST <= value <= LARGEST:
            raise invalid()
    return [float(v) if t is float else v for v, t in zip(key, shape, strict=True)]


def invalid() -> Refusal:
    return Refusal(
        grpc.StatusCode.INVALID_ARGUMENT,
        ServiceReason.PAGE_TOKEN_INVALID,
        "That page token is not one this list gave out: start again from the first page.",
    )
