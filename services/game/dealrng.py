"""Where production deals get their randomness: the OS's cryptographic source.

`secrets.SystemRandom().shuffle` draws each of a 110-card deck's swaps with its
own call into Python's random module and the OS (some 260 us on a small
virtual machine, a fifth of what creating a table costs). This shuffle reads
every draw's bytes from the OS at once and runs the same Fisher-Yates: each
order stays equally likely (a draw that would favour some cards is drawn again).
"""

from __future__ import annotations

import os
import random
import struct
from collections.abc import MutableSequence
from typing import Any

_WORD = 1 << 64


def _limit(bound: int) -> int:
    """The 64-bit words below this one map evenly onto [0, bound)."""
    return _WORD - _WORD % bound


class DealRandom(random.SystemRandom):
    """`SystemRandom` with a shuffle that asks the OS once per deck."""

    def shuffle(self, x: MutableSequence[Any]) -> None:
        n = len(x)
        if n < 2:
            return
        words = struct.unpack(f">{n}Q", os.urandom(8 * n))
        for i in range(n - 1, 0, -1):
            bound = i + 1
            word = words[i]
            while word >= _limit(bound):  # rarer than one draw in 10^16
                word = int.from_bytes(os.urandom(8))
            j = word % bound
            x[i], x[j] = x[j], x[i]
