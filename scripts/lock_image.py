"""Pin the production image's dependencies in ``deploy/requirements-image.txt``.

    python -m scripts.lock_image            # `make lock`: re-pin after pyproject.toml changed
    python -m scripts.lock_image --upgrade  # `make lock-upgrade`: the newest releases allowed
    python -m scripts.lock_image --check    # stale or not (tests/deploy/test_lock.py)

The image (Dockerfile) installs exactly these, with pip's ``--require-hashes``:
the base dependencies (the terminal client's), the ``server`` and ``otel`` extras, never
``local`` or ``dev``, resolved for CPython 3.11 on Linux (the image's base),
with the hash of every file of each pinned version (so amd64 and arm64 alike).

``uv pip compile`` keeps the versions the file pins while they still satisfy
pyproject.toml, so re-pinning changes only what a change of pyproject.toml
requires. ``--check`` re-pins the file's versions the same way and compares:
a pin that differs means the file no longer matches pyproject.toml; a hash the
index does not give for a pinned version, a file edited by hand. It asks the
package index (PyPI) for versions and hashes; with uv's cache warm it takes a
second or two.
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
import tempfile
from pathlib import Path

from uv import find_uv_bin

REPO = Path(__file__).resolve().parent.parent
LOCK = Path("deploy") / "requirements-image.txt"
EXTRAS = ("server", "otel")
PYTHON_VERSION = "3.11"
"""The image's Python (Dockerfile: python:3.11-slim)."""
PLATFORM = "linux"


class LockError(RuntimeError):
    """uv could not pin the dependencies (an unsatisfiable range, no index)."""


def compile_lock(output: Path, *, upgrade: bool = False) -> None:
    """Pin into ``output``, keeping the versions it pins already unless ``upgrade``."""
    command = [find_uv_bin(), "pip", "compile", "pyproject.toml"]
    for extra in EXTRAS:
        command += ["--extra", extra]
    command += ["--generate-hashes", "--python-version", PYTHON_VERSION]
    command += ["--python-platform", PLATFORM, "--custom-compile-command", "make lock"]
    command += ["--quiet", "--no-progress", "--output-file", str(output)]
    if upgrade:
        command.append("--upgrade")
    done = subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise LockError(f"uv pip compile failed:\n{done.stderr.strip()}")


def pins(text: str) -> list[str]:
    """The requirement and hash lines of a lock file, without comments or layout."""
    result = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip().removesuffix("\\").strip()
        if line:
            result.append(line)
    return result


def hashes(text: str) -> dict[str, set[str]]:
    """Each requirement line of a lock file, and the hashes given for it."""
    result: dict[str, set[str]] = {}
    requirement = ""
    for line in pins(text):
        if line.startswith("--hash="):
            result[requirement].add(line.removeprefix("--hash="))
        else:
            requirement = line
            result[requirement] = set()
    return result


def stale(lock: Path = REPO / LOCK) -> list[str]:
    """How ``lock`` differs from a fresh pinning, [] if it does not: a diff of the
    pins, and the hashes the index does not give (one it gives that the file
    lacks is no fault: a wheel uploaded since for a pinned version)."""
    if not lock.exists():
        return [f"{lock} is missing: run `make lock`"]
    locked = hashes(lock.read_text())
    with tempfile.TemporaryDirectory() as folder:
        fresh_file = Path(folder) / lock.name
        # The pins without their hashes: uv keeps the versions and asks the
        # index for the hashes (it would keep those of the file too).
        fresh_file.write_text("\n".join(locked))
        compile_lock(fresh_file)
        fresh = hashes(fresh_file.read_text())
    problems = list(
        difflib.unified_diff(list(locked), list(fresh), str(lock), "fresh", lineterm="")
    )
    for requirement in locked.keys() & fresh.keys():
        if unknown := sorted(locked[requirement] - fresh[requirement]):
            problems.append(f"{requirement}: not a hash the index gives: {', '.join(unknown)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--upgrade", action="store_true", help="the newest releases allowed")
    group.add_argument("--check", action="store_true", help="exit 1 if the file is stale")
    args = parser.parse_args(argv)
    try:
        if args.check:
            diff = stale()
            if diff:
                print(f"{LOCK} is stale: run `make lock`", *diff, sep="\n", file=sys.stderr)
                return 1
            return 0
        compile_lock(REPO / LOCK, upgrade=args.upgrade)
    except LockError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"wrote {LOCK}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
