"""deploy/k8s agrees with the code and with itself: ports, settings, commands,
security contexts, probes, shutdown timing, scaling, network policies, labels.

Schema validation says a manifest is well formed; these say it is right for
this project (a renamed setting or a moved port must fail here, not in a
cluster)."""

from __future__ import annotations

import base64
import re
import tomllib
from typing import Any

import pytest

from services.common.config import SETTINGS
from services.common.health import LIVENESS

from .support import REPO, Manifest, Rendered
from .support import selects as _selects

KNOWN_SETTINGS = {s.name for s in SETTINGS}
SCRIPTS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
DOCKERFILE_USER = re.search(r"^USER (\d+)", (REPO / "Dockerfile").read_text(), re.M)
TOKEN_BYTES = 32  # services/common/config.py refuses shorter RUMMY_TOKEN_SECRET values

# Deployment -> (command, setting with its listen address, setting with its metrics port)
SERVERS = {
    "rummy-game": ("rummy-game", "RUMMY_GAME_LISTEN", "RUMMY_GAME_METRICS_PORT"),
    "rummy-matchmaker": (
        "rummy-matchmaker",
        "RUMMY_MATCHMAKER_LISTEN",
        "RUMMY_MATCHMAKER_METRICS_PORT",
    ),
}
RECOMMENDED_LABELS = ("app.kubernetes.io/part-of", "app.kubernetes.io/instance")
WORKLOAD_LABELS = ("app.kubernetes.io/name", "app.kubernetes.io/component")


def _config(overlay: Rendered) -> dict[str, str]:
    [config] = [
        m for m in overlay.of_kind("ConfigMap") if m["metadata"]["name"].startswith("rummy-config")
    ]
    data: dict[str, str] = config["data"]
    return data


def _pod_templates(overlay: Rendered) -> list[tuple[Manifest, dict[str, Any]]]:
    return [
        (m, m["spec"]["template"]) for m in overlay.manifests if m["kind"] in ("Deployment", "Job")
    ]


def _container(workload: Manifest) -> dict[str, Any]:
    [container] = workload["spec"]["template"]["spec"]["containers"]
    result: dict[str, Any] = container
    return result


def _port(container: dict[str, Any], name: str) -> int:
    [port] = [p["containerPort"] for p in container["ports"] if p["name"] == name]
    value: int = port
    return value


def test_settings_are_ones_the_services_know(overlay: Rendered) -> None:
    assert set(_config(overlay)) <= KNOWN_SETTINGS, set(_config(overlay)) - KNOWN_SETTINGS
    for workload, _ in _pod_templates(overlay):
        for variable in _container(workload).get("env", []):
            assert variable["name"] in KNOWN_SETTINGS, variable["name"]


def test_the_config_map_holds_every_setting_but_the_database_and_the_secret(
    overlay: Rendered,
) -> None:
    """deploy/README.md sends operators to rummy-config for every setting: none
    may be left to a default they cannot see. The database URL and the token
    secret come from Secrets; the embedded database's folder is not used."""
    elsewhere = {"DATABASE_URL", "RUMMY_TOKEN_SECRET", "RUMMY_DATA_DIR"}
    assert set(_config(overlay)) == KNOWN_SETTINGS - elsewhere


def test_commands_are_console_scripts_of_the_project(overlay: Rendered) -> None:
    for workload, _ in _pod_templates(overlay):
        command = _container(workload)["command"]
        assert command[0] in SCRIPTS, f"{workload['metadata']['name']}: {command}"
    assert _container(overlay.one("Job", "rummy-migrate"))["command"] == ["rummy-migrate"]


def test_pods_run_locked_down(overlay: Rendered) -> None:
    assert DOCKERFILE_USER, "Dockerfile has no numeric USER"
    uid = int(DOCKERFILE_USER.group(1))
    for workload, template in _pod_templates(overlay):
        name = workload["metadata"]["name"]
        pod = template["spec"]
        assert pod["automountServiceAccountToken"] is False, name
        assert pod["serviceAccountName"] == name, name
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["runAsUser"] == uid, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        container = _container(workload)
        context = container["securityContext"]
        assert context["readOnlyRootFilesystem"] is True, name
        assert context["allowPrivilegeEscalation"] is False, name
        assert context["capabilities"] == {"drop": ["ALL"]}, name
        for kind in ("requests", "limits"):
            assert set(container["resources"][kind]) == {"cpu", "memory"}, name
        # /tmp is the one writable place (HOME in the image).
        [mount] = container["volumeMounts"]
        assert mount["mountPath"] == "/tmp", name
        [volume] = pod["volumes"]
        assert volume["name"] == mount["name"] and "emptyDir" in volume, name
    for account in overlay.of_kind("ServiceAccount"):
        assert account["automountServiceAccountToken"] is False


def test_servers_listen_probe_and_export_where_configured(overlay: Rendered) -> None:
    config = _config(overlay)
    for name, (command, listen, metrics) in SERVERS.items():
        container = _container(overlay.one("Deployment", name))
        assert container["command"] == [command]
        grpc_port = int(config[listen].rpartition(":")[2])
        assert _port(container, "grpc") == grpc_port, name
        assert _port(container, "metrics") == int(config[metrics]), name
        # Readiness follows the database; liveness (and start-up) only the process,
        # so a database outage, however long, never restarts the replicas.
        assert container["readinessProbe"]["grpc"] == {"port": grpc_port}, name
        for probe in ("startupProbe", "livenessProbe"):
            wanted = {"port": grpc_port, "service": LIVENESS}
            assert container[probe]["grpc"] == wanted, f"{name} {probe}"
        # A wedged process is restarted, not one slow for a few seconds.
        liveness = container["livenessProbe"]
        assert liveness["periodSeconds"] * liveness["failureThreshold"] >= 60, name


def test_termination_grace_covers_pre_stop_and_drain(overlay: Rendered) -> None:
    drain = int(_config(overlay)["RUMMY_SHUTDOWN_GRACE_S"])
    for name in SERVERS:
        deployment = overlay.one("Deployment", name)
        pod = deployment["spec"]["template"]["spec"]
        sleep = _container(deployment)["lifecycle"]["preStop"]["exec"]["command"]
        assert sleep[0] == "sleep", name
        margin = pod["terminationGracePeriodSeconds"] - int(sleep[1]) - drain
        assert margin >= 5, f"{name}: only {margin} s left after preStop and the drain"


def test_services_are_headless_and_reach_the_pods(overlay: Rendered) -> None:
    for name in SERVERS:
        service = overlay.one("Service", name)
        assert service["spec"]["clusterIP"] == "None", name
        template = overlay.one("Deployment", name)["spec"]["template"]
        assert _selects(
            {"matchLabels": service["spec"]["selector"]}, template["metadata"]["labels"]
        )
        names = {p["name"] for p in _container(overlay.one("Deployment", name))["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} == names == {"grpc", "metrics"}
    assert _config(overlay)["RUMMY_GAME_TARGET"].split(":")[0] == "rummy-game"


def test_autoscaling_and_disruption_budgets(overlay: Rendered) -> None:
    for name in SERVERS:
        deployment = overlay.one("Deployment", name)
        # The autoscaler owns the replica count; a fixed one would fight it on apply.
        assert "replicas" not in deployment["spec"], name
        hpa = overlay.one("HorizontalPodAutoscaler", name)
        assert hpa["spec"]["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": name,
        }
        assert 1 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
        if overlay.overlay == "production":
            assert hpa["spec"]["minReplicas"] >= 2, name
        pdb = overlay.one("PodDisruptionBudget", name)
        assert pdb["spec"]["maxUnavailable"] == 1, name
        # Readiness follows the database: an outage makes every pod unready, and
        # the default policy would then refuse every eviction (a drain hangs).
        assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow", name
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert _selects(pdb["spec"]["selector"], labels), name
        constraints = deployment["spec"]["template"]["spec"]["topologySpreadConstraints"]
        assert {c["topologyKey"] for c in constraints} == {
            "kubernetes.io/hostname",
            "topology.kubernetes.io/zone",
        }


def test_database_is_wired_and_has_room_for_every_connection(overlay: Rendered) -> None:
    [cluster] = overlay.of_kind("Cluster")
    app_secret = f"{cluster['metadata']['name']}-app"  # written by CloudNativePG
    for workload, _ in _pod_templates(overlay):
        [url] = [e for e in _container(workload)["env"] if e["name"] == "DATABASE_URL"]
        assert url["valueFrom"]["secretKeyRef"] == {"name": app_secret, "key": "uri"}
    pool = int(_config(overlay)["RUMMY_DB_POOL_SIZE"])
    needed = 1  # the migration Job
    for name in SERVERS:
        hpa = overlay.one("HorizontalPodAutoscaler", name)
        surge = overlay.one("Deployment", name)["spec"]["strategy"]["rollingUpdate"]["maxSurge"]
        # + one LISTEN connection; a game replica marks the clock over one more.
        own = 2 if name == "rummy-game" else 1
        needed += (hpa["spec"]["maxReplicas"] + surge) * (pool + own)
    available = int(cluster["spec"]["postgresql"]["parameters"]["max_connections"])
    assert needed + 10 <= available, f"{needed} connections at peak, max_connections {available}"


def test_a_database_with_standbys_acknowledges_only_what_a_standby_holds(
    overlay: Rendered,
) -> None:
    """A move is acknowledged once committed; a failover to an asynchronous standby
    could lose it. With standbys, a commit waits for one, and stays required."""
    [cluster] = overlay.of_kind("Cluster")
    spec = cluster["spec"]
    synchronous = spec.get("postgresql", {}).get("synchronous")
    if spec.get("instances", 1) == 1:
        assert synchronous is None, "a lone instance has no standby to wait for"
        return
    assert synchronous is not None, "asynchronous standbys: a failover loses commits"
    assert synchronous["method"] in ("any", "first") and synchronous["number"] >= 1
    assert synchronous.get("dataDurability", "required") == "required"
    assert synchronous["number"] < spec["instances"]


def test_token_secret_is_never_a_usable_committed_value(
    overlay: Rendered, rendered_base: list[Manifest]
) -> None:
    [placeholder] = [m for m in rendered_base if m["kind"] == "Secret"]
    value = base64.b64decode(placeholder["data"]["token-secret"])
    # Too short on purpose: a forgotten placeholder stops start-up instead of signing tokens.
    assert len(value) < TOKEN_BYTES
    secrets = overlay.of_kind("Secret")
    if overlay.overlay == "production":
        assert secrets == [], "production must not render (and so overwrite) the real secret"
    else:
        [secret] = secrets
        assert len(base64.b64decode(secret["data"]["token-secret"])) >= TOKEN_BYTES


def _allowed(
    policies: list[Manifest], labels: dict[str, str], direction: str
) -> list[dict[str, Any]]:
    return [
        rule
        for p in policies
        if _selects(p["spec"]["podSelector"], labels)
        for rule in p["spec"].get(direction, [])
    ]


def _pod_labels(overlay: Rendered, name: str) -> dict[str, str]:
    [workload] = [
        m
        for m in overlay.manifests
        if m["kind"] in ("Deployment", "Job") and m["metadata"]["name"] == name
    ]
    labels: dict[str, str] = workload["spec"]["template"]["metadata"]["labels"]
    return labels


def _ports(rule: dict[str, Any]) -> set[Any]:
    return {p["port"] for p in rule.get("ports", [])}


def _reaches(rule: dict[str, Any], labels: dict[str, str], port: Any) -> bool:
    peers = rule.get("to", rule.get("from", []))
    return port in _ports(rule) and any(
        "namespaceSelector" not in peer and _selects(peer.get("podSelector", {}), labels)
        for peer in peers
    )


def test_network_policies_deny_by_default_and_allow_what_is_needed(overlay: Rendered) -> None:
    policies = overlay.of_kind("NetworkPolicy")
    deny = [
        p
        for p in policies
        if p["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    ]
    assert deny, "no default-deny policy"
    database = {"cnpg.io/cluster": overlay.of_kind("Cluster")[0]["metadata"]["name"]}
    game = _pod_labels(overlay, "rummy-game")
    for name in ("rummy-game", "rummy-matchmaker", "rummy-migrate"):
        labels = _pod_labels(overlay, name)
        egress = _allowed(policies, labels, "egress")
        assert any(53 in _ports(r) for r in egress), f"{name}: no DNS"
        assert any(_reaches(r, database, 5432) for r in egress), f"{name}: no PostgreSQL"
        database_ingress = _allowed(policies, database, "ingress")
        assert any(_reaches(r, labels, 5432) for r in database_ingress), f"db refuses {name}"
    matchmaker = _pod_labels(overlay, "rummy-matchmaker")
    mm_egress = _allowed(policies, matchmaker, "egress")
    assert any(_reaches(r, game, 50051) for r in mm_egress), "matchmaker cannot reach game"
    game_grpc = [r for r in _allowed(policies, game, "ingress") if _ports(r) == {"grpc"}]
    assert any(r.get("from") is None or _reaches(r, matchmaker, "grpc") for r in game_grpc), (
        "game refuses the matchmaker"
    )
    for name in SERVERS:
        ingress = _allowed(policies, _pod_labels(overlay, name), "ingress")
        [grpc] = [r for r in ingress if _ports(r) == {"grpc"}]
        if overlay.of_kind("Gateway"):
            # Behind the edge, its proxies alone (test_edge.py) and the matchmaker.
            assert grpc.get("from"), name
        else:
            # Open to any client (no `from`): whatever fronts the cluster.
            assert grpc.get("from") is None, name
        # Metrics only from the monitoring namespace.
        [metrics] = [r for r in ingress if _ports(r) == {"metrics"}]
        assert all("namespaceSelector" in peer for peer in metrics["from"]), name


def test_service_monitor_scrapes_both_servers(overlay: Rendered) -> None:
    [monitor] = overlay.of_kind("ServiceMonitor")
    for name in SERVERS:
        service = overlay.one("Service", name)
        assert _selects(monitor["spec"]["selector"], service["metadata"]["labels"]), name
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["port"] == "metrics" and endpoint["path"] == "/metrics"


@pytest.mark.parametrize("label", RECOMMENDED_LABELS)
def test_recommended_labels_everywhere(overlay: Rendered, label: str) -> None:
    for manifest in overlay.manifests:
        assert label in manifest["metadata"].get("labels", {}), manifest["metadata"]["name"]
    for workload, template in _pod_templates(overlay):
        for key in (*RECOMMENDED_LABELS, *WORKLOAD_LABELS):
            assert key in template["metadata"]["labels"], workload["metadata"]["name"]
            assert key in workload["metadata"]["labels"], workload["metadata"]["name"]
