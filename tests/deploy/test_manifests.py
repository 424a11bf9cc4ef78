"""deploy/k8s: every overlay renders, matches the Kubernetes schemas, and passes
a checkov security scan with no suppression left unexplained.

- Core kinds: the `kubernetes-validate` package's schemas, offline, in strict
  mode (unknown fields are errors), for the oldest and newest Kubernetes we
  support.
- Custom resources (CloudNativePG Cluster, Prometheus-operator ServiceMonitor
  and PrometheusRule, Gateway API Gateway and GRPCRoute):
  the schemas @kubernetes-models generates from each project's Go API types,
  an npm package pinned in tests/deploy/crd-schemas and run with node. They
  check types, enums and required fields but allow unknown fields.
- Envoy Gateway's policies (production's edge): the parts of its CRDs' schemas
  used here, vendored in tests/deploy/crd-schemas/vendored (with their source
  and release), checked strictly: unknown fields are errors.
- checkov: run once on the rendered overlays and the Dockerfile, offline.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate.utils import all_versions

from .support import REPO, Manifest, Rendered, report

# Kubernetes minor versions the manifests must be valid for: the oldest we
# support (grpc probes, matchLabelKeys and Pod Security admission are all on by
# default there) and the newest kubernetes-validate knows.
OLDEST_KUBERNETES = "1.29.0"
KUBERNETES_VERSIONS = (OLDEST_KUBERNETES, kubernetes_validate.latest_version())
BUNDLED_VERSIONS = all_versions()

CRD_SCHEMAS = REPO / "tests" / "deploy" / "crd-schemas"
OPERATOR_KINDS = {
    "postgresql.cnpg.io/v1/Cluster",
    "monitoring.coreos.com/v1/ServiceMonitor",
    "monitoring.coreos.com/v1/PrometheusRule",
}
EDGE_KINDS = {
    "gateway.networking.k8s.io/v1/Gateway",
    "gateway.networking.k8s.io/v1/GRPCRoute",
    "gateway.envoyproxy.io/v1alpha1/BackendTrafficPolicy",
    "gateway.envoyproxy.io/v1alpha1/ClientTrafficPolicy",
    "gateway.envoyproxy.io/v1alpha1/SecurityPolicy",
}
CRD_KINDS = OPERATOR_KINDS | EDGE_KINDS
# Overlays with the edge (a Gateway in front of the gRPC ports).
EDGE_OVERLAYS = {"production"}

EXPECTED_KINDS = {
    "Namespace": 1,
    "ServiceAccount": 3,
    "Deployment": 2,
    "Service": 2,
    "Job": 1,
    "HorizontalPodAutoscaler": 2,
    "PodDisruptionBudget": 2,
    "ServiceMonitor": 1,
    "PrometheusRule": 1,
    "Cluster": 1,
}
EDGE_COUNTS = {
    "Gateway": 1,
    "GRPCRoute": 2,
    "BackendTrafficPolicy": 1,
    "ClientTrafficPolicy": 1,
    "SecurityPolicy": 1,
}


def _key(manifest: Manifest) -> str:
    return f"{manifest['apiVersion']}/{manifest['kind']}"


def _name(manifest: Manifest) -> str:
    return f"{manifest['kind']}/{manifest['metadata']['name']}"


def test_overlay_renders_every_piece(overlay: Rendered) -> None:
    counts: dict[str, int] = {}
    for manifest in overlay.manifests:
        counts[manifest["kind"]] = counts.get(manifest["kind"], 0) + 1
    for kind, expected in EXPECTED_KINDS.items():
        assert counts.get(kind) == expected, f"{overlay.overlay}: {kind} x{counts.get(kind)}"
    edge = overlay.overlay in EDGE_OVERLAYS
    for kind, expected in EDGE_COUNTS.items():
        assert counts.get(kind, 0) == (expected if edge else 0), f"{overlay.overlay}: {kind}"
    assert counts.get("NetworkPolicy", 0) >= 5
    namespace = overlay.of_kind("Namespace")[0]["metadata"]["name"]
    for manifest in overlay.manifests:
        if manifest["kind"] != "Namespace":
            assert manifest["metadata"].get("namespace") == namespace, _name(manifest)


def _core_schema_errors(manifest: Manifest, version: str) -> str | None:
    try:
        kubernetes_validate.validate(manifest, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        where = "/".join(str(p) for p in error.path)
        return f"{_name(manifest)} (Kubernetes {version}) at {where}: {error.message}"
    return None


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_core_kinds_match_kubernetes_schemas(overlay: Rendered, version: str) -> None:
    assert version in BUNDLED_VERSIONS, f"kubernetes-validate no longer ships {version}"
    errors = []
    for manifest in overlay.manifests:
        if _key(manifest) in CRD_KINDS:
            continue
        try:
            error = _core_schema_errors(manifest, version)
        except kubernetes_validate.SchemaNotFoundError:
            pytest.fail(f"{_key(manifest)}: no Kubernetes schema and no CRD schema either")
        if error:
            errors.append(error)
    assert not errors, "\n".join(errors)
    report(
        f"core kinds: validated strictly against Kubernetes {', '.join(KUBERNETES_VERSIONS)} "
        "(kubernetes-validate)"
    )


def test_strict_validation_rejects_an_unknown_field(rendered: dict[str, Rendered]) -> None:
    """The schema check is not vacuous: a misspelt field is an error."""
    deployment = copy.deepcopy(rendered["production"].one("Deployment", "rummy-game"))
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    container["readinesProbe"] = container.pop("readinessProbe")
    assert _core_schema_errors(deployment, OLDEST_KUBERNETES)


def _npm_ci() -> None:
    npm = shutil.which("npm")
    assert npm and shutil.which("node"), "node and npm are needed for the CRD schemas"
    stamp = CRD_SCHEMAS / "node_modules" / ".package-lock.json"
    lock = CRD_SCHEMAS / "package-lock.json"
    if stamp.exists() and stamp.stat().st_mtime >= lock.stat().st_mtime:
        return
    done = subprocess.run(
        [npm, "ci", "--prefix", str(CRD_SCHEMAS), "--no-audit", "--no-fund", "--loglevel=error"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"npm ci in {CRD_SCHEMAS} failed:\n{done.stderr}"


def validate_custom_resources(manifests: list[Manifest]) -> list[dict[str, Any]]:
    _npm_ci()
    done = subprocess.run(
        ["node", str(CRD_SCHEMAS / "validate.mjs")],
        input=json.dumps(manifests),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


def test_custom_resources_match_operator_schemas(overlay: Rendered) -> None:
    custom = [m for m in overlay.manifests if _key(m) in CRD_KINDS]
    expected = OPERATOR_KINDS | (EDGE_KINDS if overlay.overlay in EDGE_OVERLAYS else set())
    assert {_key(m) for m in custom} == expected
    results = validate_custom_resources(custom)
    problems = [r for r in results if r["status"] != "valid"]
    assert not problems, json.dumps(problems, indent=2)
    report(
        "custom resources: Cluster (postgresql.cnpg.io/v1), ServiceMonitor and PrometheusRule "
        "(monitoring.coreos.com/v1), Gateway and GRPCRoute (gateway.networking.k8s.io/v1) "
        "validated against the projects' generated schemas (@kubernetes-models): types, "
        "enums and required fields; unknown fields are NOT detected (those schemas allow "
        "additional properties)"
    )
    if overlay.overlay in EDGE_OVERLAYS:
        report(
            "custom resources: Envoy Gateway's BackendTrafficPolicy, ClientTrafficPolicy and "
            "SecurityPolicy (gateway.envoyproxy.io/v1alpha1) validated strictly (unknown "
            "fields too) against the parts of its CRDs vendored in tests/deploy/crd-schemas/"
            "vendored; their CEL rules are NOT run (test_edge.py checks what they would)"
        )
    report("kinds skipped by the schema checks: none")


def test_crd_validation_rejects_a_wrong_type(rendered: dict[str, Rendered]) -> None:
    cluster = copy.deepcopy(rendered["production"].one("Cluster", "rummy-db"))
    cluster["spec"]["instances"] = "three"
    rule = copy.deepcopy(rendered["production"].one("PrometheusRule", "rummy"))
    rule["spec"]["groups"][0]["rules"][0]["labels"] = "warning"
    results = validate_custom_resources([cluster, rule])
    assert [r["status"] for r in results] == ["invalid", "invalid"], results


def _broken(manifest: Manifest, path: str, value: Any) -> Manifest:
    """A copy of ``manifest`` with the field at ``path`` (a/b/0/c) set to ``value``."""
    result = copy.deepcopy(manifest)
    *parents, last = [int(p) if p.isdigit() else p for p in path.split("/")]
    node: Any = result
    for part in parents:
        node = node[part]
    node[last] = value
    return result


EDGE_BREAKAGES = [
    ("Gateway", "rummy", "spec/listeners/0/port", "443"),
    ("Gateway", "rummy", "spec/listeners/0/hostname", "api.rummy.example.com:443"),
    ("GRPCRoute", "rummy-game", "spec/rules/0/matches/0/method/type", "Prefix"),
    ("GRPCRoute", "rummy-matchmaker", "spec/rules/0/backendRefs/0/port", "grpc"),
    ("BackendTrafficPolicy", "rummy-edge", "spec/loadBalancer/type", "Fastest"),
    ("BackendTrafficPolicy", "rummy-edge", "spec/timeout/http/requestTimeout", "never"),
    ("ClientTrafficPolicy", "rummy-edge", "spec/tcpKeepalive/probes", "two"),
    # Misspelt: strict, as the API server's field validation.
    ("ClientTrafficPolicy", "rummy-edge", "spec/tcpKeepAlive", {"idleTime": "60s"}),
    ("SecurityPolicy", "rummy-edge", "spec/cors/exposeHeaders", "grpc-status"),
    ("SecurityPolicy", "rummy-edge", "spec/cors/allowOrigin", ["https://example.com"]),
]


def test_edge_validation_rejects_a_broken_field(rendered: dict[str, Rendered]) -> None:
    production = rendered["production"]
    broken = [
        _broken(production.one(kind, name), path, value)
        for kind, name, path, value in EDGE_BREAKAGES
    ]
    results = validate_custom_resources(broken)
    invalid = [r["status"] == "invalid" for r in results]
    assert all(invalid), [b for b, ok in zip(EDGE_BREAKAGES, invalid, strict=True) if not ok]


# --- checkov --------------------------------------------------------------------

OFFLINE_ENV = {
    # Never ask PyPI for a newer checkov, never fetch the platform's check metadata.
    "CKV_SKIP_PACKAGE_UPDATE_CHECK": "true",
    "BC_SKIP_MAPPING": "TRUE",
    # Belt and braces: any request that slips through goes nowhere, at once.
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "http_proxy": "http://127.0.0.1:9",
    "NO_PROXY": "",
    "no_proxy": "",
    "LOG_LEVEL": "WARNING",
}
PLATFORM_ENV = ("BC_API_KEY", "PRISMA_API_URL", "BC_API_URL", "CKV_API_KEY")


@pytest.fixture(scope="session")
def checkov_reports(rendered: dict[str, Rendered]) -> list[dict[str, Any]]:
    """One checkov run over every rendered overlay and the Dockerfile."""
    checkov = Path(sys.executable).parent / "checkov"
    assert checkov.exists(), "checkov is missing: pip install -e '.[dev]'"
    env = {k: v for k, v in os.environ.items() if k not in PLATFORM_ENV}
    env.update(OFFLINE_ENV)
    files = [str(r.path) for r in rendered.values()] + [str(REPO / "Dockerfile")]
    command = [str(checkov), "--skip-download", "-o", "json"]
    command += ["--framework", "kubernetes", "dockerfile", "secrets"]
    for path in files:
        command += ["-f", path]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=240, env=env, check=False, cwd=REPO
    )
    assert done.returncode in (0, 1), f"checkov crashed:\n{done.stderr[-4000:]}"
    data = json.loads(done.stdout)
    reports = data if isinstance(data, list) else [data]
    # A framework that found nothing to scan prints a bare summary.
    return [r for r in reports if "check_type" in r]


def test_checkov_finds_nothing_unsuppressed(checkov_reports: list[dict[str, Any]]) -> None:
    by_type = {r["check_type"]: r for r in checkov_reports}
    assert {"kubernetes", "dockerfile"} <= by_type.keys(), by_type.keys()
    failed = []
    for result in checkov_reports:
        assert result["summary"]["parsing_errors"] == 0, result["check_type"]
        failed += [
            f"{c['check_id']} {c['check_name']}: {c['resource']} ({c['file_path']})"
            for c in result["results"]["failed_checks"]
        ]
    assert not failed, "checkov findings:\n" + "\n".join(failed)
    for result in checkov_reports:
        summary = result["summary"]
        report(
            f"checkov {summary['checkov_version']} {result['check_type']}: "
            f"{summary['passed']} passed, {summary['failed']} failed, "
            f"{summary['skipped']} suppressed"
        )


def test_every_checkov_suppression_gives_its_reason(
    checkov_reports: list[dict[str, Any]],
) -> None:
    reasons: dict[str, set[str]] = {}
    for result in checkov_reports:
        for skipped in result["results"]["skipped_checks"]:
            reason = (skipped["check_result"].get("suppress_comment") or "").strip()
            where = f"{skipped['check_id']} on {skipped['resource']}"
            assert len(reason) >= 40 and reason != "No comment provided", where
            reasons.setdefault(skipped["check_id"], set()).add(skipped["resource"])
    for check_id, resources in sorted(reasons.items()):
        report(f"  suppressed {check_id} on {len(resources)} resource(s), reason given in place")
