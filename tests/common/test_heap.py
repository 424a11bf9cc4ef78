"""Fixed malloc thresholds, or a trim, give freed buffers back to the system."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# A process that frees one large buffer (glibc then raises its mmap threshold
# to that size), allocates 32 x 2 MiB, pins the heap's top with a smaller block
# and frees the 32: it prints how many MiB of anonymous memory went back.
PROGRAM = """
import sys
from pathlib import Path
from services.common.heap import fix_malloc_thresholds, release_free_memory

def anon_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) // 1024

if sys.argv[1] == "fixed":
    assert fix_malloc_thresholds()
big = bytearray(8 << 20)
del big
blocks = [bytearray(2 << 20) for _ in range(32)]
pin = bytearray(256 << 10)
before = anon_mib()
del blocks
if sys.argv[1] == "trimmed":
    assert release_free_memory()
print(before - anon_mib())
"""

glibc_only = pytest.mark.skipif(
    platform.libc_ver()[0] != "glibc", reason="the thresholds are glibc's malloc's"
)


def released_mib(mode: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, mode],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return int(done.stdout)


@glibc_only
def test_with_fixed_thresholds_freed_buffers_leave_the_process() -> None:
    assert released_mib("fixed") >= 60


@glibc_only
def test_a_trim_gives_back_what_the_heap_kept() -> None:
    assert released_mib("trimmed") >= 60


@glibc_only
def test_without_them_glibc_keeps_the_freed_buffers_resident() -> None:
    """The behaviour the fix is for: if glibc stopped doing this, drop the fix."""
    assert released_mib("default") <= 8
