"""`buf lint` (default rules) and `buf format` pass on proto/.

buf is an npm package pinned in tools/buf; `make test` installs it with
`npm ci --prefix tools/buf`. Its absence is a failure, not a skip: CI must
never pass without having linted the API.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUF = REPO / "tools" / "buf" / "node_modules" / ".bin" / "buf"


def _buf(*args: str) -> subprocess.CompletedProcess[str]:
    assert BUF.exists(), f"{BUF.relative_to(REPO)} is missing: run `npm ci --prefix tools/buf`"
    return subprocess.run(
        [str(BUF), *args], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )


def test_buf_lint() -> None:
    done = _buf("lint")
    assert done.returncode == 0, done.stdout + done.stderr


def test_buf_format() -> None:
    done = _buf("format", "--diff", "--exit-code")
    assert done.returncode == 0, "run `buf format -w`:\n" + done.stdout + done.stderr
