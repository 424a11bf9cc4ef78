"""The Grafana dashboard (deploy/k8s/base/monitoring/rummy-dashboard.json) queries
exactly the metrics the services export, with labels they carry, and ships in
every overlay as a ConfigMap the Grafana sidecar picks up."""

from __future__ import annotations

import json
import re
from typing import Any

from services.common import metrics as service_metrics

from .support import K8S, Rendered, report

DASHBOARD = K8S / "base" / "monitoring" / "rummy-dashboard.json"

# The metrics contract: exposed name -> labels (histograms add `le`).
METRICS: dict[str, set[str]] = {
    "rummy_rpc_requests_total": {"service", "method", "code"},
    "rummy_rpc_duration_seconds_bucket": {"service", "method", "le"},
    "rummy_actions_total": {"action", "outcome"},
    "rummy_timeouts_fired_total": set(),
    "rummy_turns_resumed_total": set(),
    "rummy_timeout_lateness_seconds_bucket": {"le"},
    "rummy_turn_cap_endings_total": {"ruleset"},
    "rummy_known_state_moves_total": {"outcome"},
    "rummy_watch_streams": set(),
    "rummy_active_tables": set(),
    "rummy_games_finished_total": {"ruleset", "reason"},
    "rummy_db_pool_connections": {"service", "state"},
    "rummy_db_transaction_seconds_bucket": {"op", "le"},
    "rummy_queue_depth": {"queue"},
    "rummy_match_wait_seconds_bucket": {"queue", "outcome", "le"},
    "rummy_matches_total": {"queue"},
    "rummy_tickets_ended_total": {"queue", "outcome"},
    "rummy_matching_loop_seconds_bucket": {"le"},
    "rummy_event_loop_lag_seconds_bucket": {"le"},
}
# Added by Prometheus to every series scraped through the ServiceMonitor.
TARGET_LABELS = {"namespace", "pod", "job", "instance", "endpoint", "container"}
PANELS = (
    "RPC rate by method",
    "RPC error ratio by method",
    "RPC latency p50 / p99 by method",
    "Actions by outcome",
    "Turn timeouts fired",
    "Timeout lateness p50 / p99",
    "Open Watch streams",
    "Active tables",
    "Games finished per minute",
    "Moves by what the replica knew of the table",
    "DB pool connections",
    "DB transaction latency p50 / p99 by operation",
    "Queue depth",
    "Match wait p50 / p99 by queue",
    "Matches per second",
    "Event loop lag p99 by pod",
)


def _dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def _panels() -> list[dict[str, Any]]:
    return [p for p in _dashboard()["panels"] if p["type"] != "row"]


def _exprs() -> list[str]:
    return [t["expr"] for p in _panels() for t in p["targets"]]


def _labels_used(expr: str) -> set[str]:
    grouped = {
        label.strip()
        for clause in re.findall(r"\b(?:by|without)\s*\(([^)]*)\)", expr)
        for label in clause.split(",")
        if label.strip()
    }
    matched = {
        m for block in re.findall(r"\{([^}]*)\}", expr) for m in re.findall(r"(\w+)\s*[=!]", block)
    }
    return grouped | matched


def test_dashboard_is_well_formed() -> None:
    dashboard = _dashboard()
    assert dashboard["uid"] and dashboard["title"]
    ids = [p["id"] for p in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"datasource", "namespace"} <= variables
    for panel in _panels():
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]
    titles = {p["title"] for p in _panels()}
    assert not set(PANELS) - titles, set(PANELS) - titles


def test_queries_use_exactly_the_contracted_metrics_and_labels() -> None:
    used: set[str] = set()
    for expr in _exprs():
        metrics = set(re.findall(r"\brummy_\w+", expr))
        assert metrics <= METRICS.keys(), metrics - METRICS.keys()
        used |= metrics
        allowed = TARGET_LABELS.union(*(METRICS[m] for m in metrics))
        assert _labels_used(expr) <= allowed, (expr, _labels_used(expr) - allowed)
        assert 'namespace=~"$namespace"' in expr, expr
    assert used == METRICS.keys(), METRICS.keys() - used


def test_contract_matches_the_metrics_the_services_define() -> None:
    suffix = {"counter": "_total", "histogram": "_bucket", "gauge": ""}
    defined = {}
    for value in vars(service_metrics).values():
        describe = getattr(value, "describe", None)
        labelnames = getattr(value, "_labelnames", None)
        if describe is None or labelnames is None:
            continue
        [family] = describe()
        extra = {"le"} if family.type == "histogram" else set()
        defined[family.name + suffix[family.type]] = set(labelnames) | extra
    mismatched = {m: defined.get(m) for m in METRICS if defined.get(m) != METRICS[m]}
    assert not mismatched, f"dashboard contract vs services.common.metrics: {mismatched}"
    if extra := sorted(defined.keys() - METRICS.keys()):
        report(f"metrics defined but on no dashboard panel: {', '.join(extra)}")


def test_every_overlay_ships_the_dashboard_to_grafana(overlay: Rendered) -> None:
    config_map = overlay.one("ConfigMap", "rummy-grafana-dashboard")
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert json.loads(config_map["data"]["rummy-dashboard.json"]) == _dashboard()
