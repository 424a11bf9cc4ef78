"""The alerts (PrometheusRule `rummy`, deploy/k8s/base/monitoring/alerts.yaml):
the rule groups are taken out of each rendered overlay and run through
`promtool check rules` and the unit tests of alerts-test.yaml (`promtool test
rules`); each alert queries metrics the services export, with labels they
carry, and has its runbook line in deploy/README.md."""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from .support import REPO, Rendered, report
from .test_dashboard import METRICS, TARGET_LABELS, _labels_used

UNIT_TESTS = Path(__file__).with_name("alerts-test.yaml")
README = REPO / "deploy" / "README.md"
RUNBOOK_URL = "deploy/README.md#alerts"
EXPECTED = {
    "RummyEventLoopLagging": "rummy_event_loop_lag_seconds_bucket",
    "RummyRpcErrors": "rummy_rpc_requests_total",
    "RummyDatabasePoolSaturated": "rummy_db_pool_connections",
    "RummyMatchWaitLong": "rummy_match_wait_seconds_bucket",
    "RummyTimeoutsOverdue": "rummy_timeout_lateness_seconds_bucket",
    "RummyTurnsResumed": "rummy_turns_resumed_total",
}
"""Each alert, and the metric it watches."""


def _groups(overlay: Rendered) -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = overlay.one("PrometheusRule", "rummy")["spec"]["groups"]
    return groups


def _alerts(overlay: Rendered) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in _groups(overlay) for r in g["rules"] if "alert" in r}


def _promtool(promtool: str, folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [promtool, *args], cwd=folder, capture_output=True, text=True, timeout=60, check=False
    )


def _unit_test(promtool: str, folder: Path, groups: list[dict[str, Any]]) -> str | None:
    """promtool's report if the unit tests fail on ``groups``, None if they pass."""
    folder.mkdir(exist_ok=True)
    (folder / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    (folder / UNIT_TESTS.name).write_text(UNIT_TESTS.read_text())
    checked = _promtool(promtool, folder, "check", "rules", "rules.yaml")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    done = _promtool(promtool, folder, "test", "rules", UNIT_TESTS.name)
    return None if done.returncode == 0 else done.stdout + done.stderr


def test_every_overlay_carries_the_alerts(overlay: Rendered) -> None:
    assert set(_alerts(overlay)) == set(EXPECTED)


def test_the_alerts_pass_their_unit_tests(overlay: Rendered, promtool: str, tmp_path: Path) -> None:
    failed = _unit_test(promtool, tmp_path, _groups(overlay))
    assert failed is None, failed
    version = _promtool(promtool, tmp_path, "--version").stdout.split("\n", 1)[0]
    report(f"alerts: {len(EXPECTED)} rules pass `promtool test rules` ({version})")


def test_every_alert_fires_in_a_case_and_stays_quiet_in_another() -> None:
    cases = [
        c for t in yaml.safe_load(UNIT_TESTS.read_text())["tests"] for c in t["alert_rule_test"]
    ]
    for alert in EXPECTED:
        mine = [c for c in cases if c["alertname"] == alert]
        assert any(c["exp_alerts"] for c in mine), f"{alert} never fires in {UNIT_TESTS.name}"
        assert any(not c["exp_alerts"] for c in mine), f"{alert} never stays quiet"


@pytest.mark.parametrize(
    ("alert", "change"),
    [
        ("RummyRpcErrors", (r"> 0\.05\n", "> 0.5\n")),  # a threshold too high: no alert
        ("RummyDatabasePoolSaturated", (r'state="in_use"', 'state="idle"')),  # the wrong series
        ("RummyTurnsResumed", (r"> 0$", "> 100")),
    ],
)
def test_a_broken_rule_fails_its_unit_tests(
    rendered: dict[str, Rendered],
    promtool: str,
    tmp_path: Path,
    alert: str,
    change: tuple[str, str],
) -> None:
    groups = copy.deepcopy(_groups(rendered["production"]))
    [rule] = [r for g in groups for r in g["rules"] if r.get("alert") == alert]
    rule["expr"], count = re.subn(change[0], change[1], rule["expr"], flags=re.MULTILINE)
    assert count, rule["expr"]
    failed = _unit_test(promtool, tmp_path, groups)
    assert failed is not None and alert in failed


def test_alerts_query_the_services_metrics_with_their_labels(
    rendered: dict[str, Rendered],
) -> None:
    for name, rule in _alerts(rendered["production"]).items():
        expr = rule["expr"]
        metrics = set(re.findall(r"\brummy_\w+", expr))
        assert metrics == {EXPECTED[name]}, (name, metrics)
        allowed = TARGET_LABELS.union(*(METRICS[m] for m in metrics))
        assert _labels_used(expr) <= allowed, (name, _labels_used(expr) - allowed)
        grouped = re.findall(r"\bby \(([^)]*)\)", expr)
        assert all("namespace" in g for g in grouped), f"{name}: dev and production apart"


def test_rpc_errors_leave_out_exactly_the_server_streams(rendered: dict[str, Rendered]) -> None:
    """A replica that stops ends its server streams UNAVAILABLE, by design."""
    streams = {
        m.group(1)
        for proto in (REPO / "proto").rglob("*.proto")
        for m in re.finditer(r"\brpc (\w+)\([^)]*\) returns \(stream ", proto.read_text())
    }
    expr = _alerts(rendered["production"])["RummyRpcErrors"]["expr"]
    [left_out] = re.findall(r'code="UNAVAILABLE", method!~"([^"]+)"', expr)
    assert set(left_out.split("|")) == streams


def _runbook() -> str:
    text = README.read_text()
    match = re.search(r"^## Alerts\n(.*?)^## ", text, flags=re.MULTILINE | re.DOTALL)
    assert match, f"{README} has no Alerts section"
    return match.group(1)


def test_every_alert_has_a_runbook_line(rendered: dict[str, Rendered]) -> None:
    lines = {
        m.group(1): m.group(0)
        for m in re.finditer(r"^- \*\*(\w+)\*\* \((critical|warning)\b.*$", _runbook(), re.M)
    }
    alerts = _alerts(rendered["production"])
    assert set(lines) == set(alerts), set(alerts) ^ set(lines)
    for name, rule in alerts.items():
        severity = rule["labels"]["severity"]
        assert lines[name].startswith(f"- **{name}** ({severity}"), name
        assert rule["annotations"]["runbook_url"] == RUNBOOK_URL, name
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], name
        assert len(lines[name]) > 200, f"{name}: a runbook says what to look at and do"
