"""Keep a long-running server's heap from creeping up.

glibc's malloc raises its mmap threshold each time a large block it had mapped
is freed (up to 32 MiB), and its trim threshold with it. After a while large
buffers (gRPC messages, query results) come from the heap instead and freed
memory stays resident: a server's RSS creeps up for hours although nothing is
leaked. Fixed thresholds stop that: blocks of a MiB or more are mapped and
unmapped, and a heap with more than a MiB free on top gives it back.

Measured with the soak benchmark: a game replica's anonymous memory grew
0.16-0.24 MB/min over the second half of a run without this, under 0.1 with it.
At 128 KiB (glibc's starting value) the mapping and unmapping of mid-size
buffers cost the game server 11% more CPU per action; at 1 MiB, nothing measurable.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
THRESHOLD_BYTES = 1024 * 1024


def fix_malloc_thresholds(threshold: int = THRESHOLD_BYTES) -> bool:
    """Fix glibc's trim and mmap thresholds; False where malloc is not glibc's."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # not glibc (musl has no mallopt)
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_TRIM_THRESHOLD, threshold)) and bool(mallopt(M_MMAP_THRESHOLD, threshold))
