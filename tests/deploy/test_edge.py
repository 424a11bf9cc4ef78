"""The edge (deploy/k8s/overlays/production/edge): one TLS host on 443 where apps
call every public service of rummy.v1 over gRPC and browsers over gRPC-Web, each
call balanced over the pods, and nothing else of the servers reachable.

The schemas say the Gateway API and Envoy Gateway objects are well formed
(test_manifests.py); these say they are right for this project: the routes
against the generated descriptors and against what real servers serve, the
policies against the servers' own timings, the network policies against the
proxies' labels."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

import services.common.pb.rummy as pb_rummy
from services.common.serving import KEEPALIVE_MS, KEEPALIVE_TIMEOUT_MS

from ..cli.harness import servers
from .support import REPO, Manifest, Rendered, selects

PUBLIC_PACKAGE = "rummy.v1"
# Envoy Gateway's labels on the proxies it runs for a Gateway, in its own namespace.
PROXY_NAMESPACE = "envoy-gateway-system"
PROXY_LABELS = {
    "app.kubernetes.io/name": "envoy",
    "app.kubernetes.io/component": "proxy",
    "app.kubernetes.io/managed-by": "envoy-gateway",
}
# What a browser's gRPC-Web client sends and must be able to read back.
GRPC_WEB_REQUEST_HEADERS = {"content-type", "x-grpc-web", "x-user-agent", "grpc-timeout"}
GRPC_WEB_RESPONSE_HEADERS = {"grpc-status", "grpc-message", "grpc-status-details-bin"}


def _services_by_package() -> dict[str, set[str]]:
    """Full names of the services in the generated code, by proto package."""
    found: dict[str, set[str]] = {}
    prefix = f"{pb_rummy.__name__}."
    for module in pkgutil.walk_packages(pb_rummy.__path__, prefix):
        if not module.name.endswith("_pb2"):
            continue
        descriptor = importlib.import_module(module.name).DESCRIPTOR
        for service in descriptor.services_by_name.values():
            found.setdefault(descriptor.package, set()).add(service.full_name)
    return found


def _config(overlay: Rendered) -> dict[str, str]:
    [config] = [
        m for m in overlay.of_kind("ConfigMap") if m["metadata"]["name"].startswith("rummy-config")
    ]
    data: dict[str, str] = config["data"]
    return data


def _gateway(overlay: Rendered) -> tuple[Manifest, dict[str, Any]]:
    [gateway] = overlay.of_kind("Gateway")
    [listener] = gateway["spec"]["listeners"]
    return gateway, listener


def _routed(overlay: Rendered) -> list[tuple[str, Manifest]]:
    """(service full name, backendRef) for every method match of every GRPCRoute."""
    result = []
    for route in overlay.of_kind("GRPCRoute"):
        for rule in route["spec"]["rules"]:
            [backend] = rule["backendRefs"]
            for match in rule["matches"]:
                method = match["method"]
                # A whole service by its exact name: no catch-all, no pattern.
                assert method.get("type") == "Exact" and "method" not in method, method
                result.append((method["service"], backend))
    return result


def _ports(rule: dict[str, Any]) -> set[Any]:
    return {p["port"] for p in rule.get("ports", [])}


def _admits(
    overlay: Rendered, target: dict[str, str], port: str, pod: dict[str, str], namespace: str
) -> bool:
    """Whether the ingress NetworkPolicies of ``target`` (pod labels) let a pod with
    labels ``pod`` in ``namespace`` connect to its port named ``port``."""
    [own] = overlay.of_kind("Namespace")
    namespace_labels = {"kubernetes.io/metadata.name": namespace}
    for policy in overlay.of_kind("NetworkPolicy"):
        if not selects(policy["spec"]["podSelector"], target):
            continue
        for rule in policy["spec"].get("ingress", []):
            if rule.get("ports") and port not in _ports(rule):
                continue
            if "from" not in rule:
                return True
            for peer in rule["from"]:
                if "namespaceSelector" in peer:
                    in_namespace = selects(peer["namespaceSelector"], namespace_labels)
                else:
                    in_namespace = namespace == own["metadata"]["name"]
                if in_namespace and selects(peer.get("podSelector", {}), pod):
                    return True
    return False


def _backend_pods(overlay: Rendered, backend: Manifest) -> tuple[dict[str, str], str, Manifest]:
    """The labels of the pods behind a backendRef, the name of the container port it
    reaches, and their Deployment."""
    service = overlay.one("Service", backend["name"])
    [port] = [p for p in service["spec"]["ports"] if p["port"] == backend["port"]]
    [deployment] = [
        d
        for d in overlay.of_kind("Deployment")
        if selects(
            {"matchLabels": service["spec"]["selector"]},
            d["spec"]["template"]["metadata"]["labels"],
        )
    ]
    labels: dict[str, str] = deployment["spec"]["template"]["metadata"]["labels"]
    return labels, port["targetPort"], deployment


def test_only_the_production_overlay_has_an_edge(rendered: dict[str, Rendered]) -> None:
    assert rendered["production"].of_kind("Gateway")
    assert not rendered["dev"].of_kind("Gateway")


def test_the_gateway_ends_tls_on_443_for_the_address_players_are_given(
    rendered: dict[str, Rendered],
) -> None:
    production = rendered["production"]
    gateway, listener = _gateway(production)
    assert listener["protocol"] == "HTTPS" and listener["port"] == 443
    tls = listener["tls"]
    assert tls["mode"] == "Terminate"
    [certificate] = tls["certificateRefs"]
    assert certificate.get("kind", "Secret") == "Secret" and certificate.get("group", "") == ""
    # In the Gateway's namespace, made out of band (deploy/README.md): never rendered.
    assert "namespace" not in certificate
    secrets = {s["metadata"]["name"] for s in production.of_kind("Secret")}
    assert certificate["name"] not in secrets
    # The matchmaker names the gateway to players as the game service's address.
    host, _, port = _config(production)["RUMMY_GAME_PUBLIC_TARGET"].rpartition(":")
    assert (host, int(port)) == (listener["hostname"], listener["port"])
    # gRPC routes of this namespace only.
    allowed = listener["allowedRoutes"]
    assert allowed["namespaces"] == {"from": "Same"}
    assert [k["kind"] for k in allowed["kinds"]] == ["GRPCRoute"]
    for route in production.of_kind("GRPCRoute"):
        [parent] = route["spec"]["parentRefs"]
        assert parent == {"name": gateway["metadata"]["name"], "sectionName": listener["name"]}
        assert route["spec"]["hostnames"] == [listener["hostname"]]


def test_every_public_service_is_routed_once_and_nothing_else(
    rendered: dict[str, Rendered],
) -> None:
    by_package = _services_by_package()
    public = by_package[PUBLIC_PACKAGE]
    assert {"rummy.v1.AuthService", "rummy.v1.GameService"} <= public
    private = set().union(*(v for k, v in by_package.items() if k != PUBLIC_PACKAGE))
    assert "rummy.admin.v1.TableAdminService" in private
    routed = [service for service, _ in _routed(rendered["production"])]
    assert len(routed) == len(set(routed)), routed
    assert set(routed) == public
    assert not set(routed) & (private | {"grpc.health.v1.Health"})


async def test_each_route_leads_to_a_server_that_serves_its_services(
    rendered: dict[str, Rendered], fresh_dsn: str
) -> None:
    """Real servers, asked by reflection what they serve, behind each backendRef."""
    production = rendered["production"]
    commands = {}
    for service, backend in _routed(production):
        _, target_port, deployment = _backend_pods(production, backend)
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        assert target_port in {p["name"] for p in container["ports"]}
        commands.setdefault(container["command"][0], set()).add(service)
    async with servers(fresh_dsn) as running:
        addresses = {"rummy-game": running.game_address, "rummy-matchmaker": running.address}
        assert commands.keys() <= addresses.keys(), commands
        for command, services in commands.items():
            served = await _served(addresses[command])
            assert services <= served, f"{command} does not serve {services - served}"


async def _served(address: str) -> set[str]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for response in stub.ServerReflectionInfo(iter([request])):
            return {s.name for s in response.list_services_response.service}
    raise AssertionError(f"{address}: no reflection answer")


def test_each_call_is_balanced_over_the_pods_and_streams_have_no_time_limit(
    rendered: dict[str, Rendered],
) -> None:
    production = rendered["production"]
    [policy] = production.of_kind("BackendTrafficPolicy")
    spec = policy["spec"]
    # Per request (one gRPC call), each to the next ready pod.
    assert spec["loadBalancer"] == {"type": "RoundRobin"}
    # Envoy's default would end every stream after 15 s.
    assert re.fullmatch(r"0+(h|m|s|ms)", spec["timeout"]["http"]["requestTimeout"])
    # Envoy Gateway reaches the pods from the Services' EndpointSlices: the
    # headless Services have no cluster IP to route to (routingType Service).
    assert spec.get("routingType", "Endpoint") == "Endpoint"
    for _, backend in _routed(production):
        assert backend.get("kind", "Service") == "Service" and "namespace" not in backend
        assert production.one("Service", backend["name"])["spec"]["clusterIP"] == "None"


def test_a_vanished_app_is_noticed_as_the_servers_would(rendered: dict[str, Rendered]) -> None:
    """The servers ping the proxies, not the apps: the proxies must drop a dead
    app's connection (and so its streams) about as soon as a server would."""
    [policy] = rendered["production"].of_kind("ClientTrafficPolicy")
    keepalive = policy["spec"]["tcpKeepalive"]
    idle, interval = (_seconds(keepalive[k]) for k in ("idleTime", "interval"))
    assert idle <= KEEPALIVE_MS / 1000
    assert idle + interval * keepalive["probes"] <= (KEEPALIVE_MS + KEEPALIVE_TIMEOUT_MS) / 1000
    # Each app's connection is bounded at the proxy, the servers' per-connection
    # limit being off behind it.
    assert 8 <= policy["spec"]["http2"]["maxConcurrentStreams"] <= 1000
    assert _config(rendered["production"])["RUMMY_RATE_PER_PEER"] == "0"


def _seconds(duration: str) -> float:
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    parts = re.findall(r"(\d+)(ms|h|m|s)", duration)
    assert "".join(n + u for n, u in parts) == duration, duration
    return sum(int(n) * units[u] for n, u in parts)


def test_browsers_may_call_with_grpc_web(rendered: dict[str, Rendered]) -> None:
    """Envoy Gateway turns gRPC-Web into gRPC on every listener a GRPCRoute is
    attached to; a page from another origin needs CORS to call, and to read a
    refusal's status and reason."""
    production = rendered["production"]
    [policy] = production.of_kind("SecurityPolicy")
    cors = policy["spec"]["cors"]
    assert cors["allowOrigins"] and all(
        o.startswith("https://") and "*" not in o for o in cors["allowOrigins"]
    )
    assert "POST" in cors["allowMethods"]
    assert {h.lower() for h in cors["allowHeaders"]} >= GRPC_WEB_REQUEST_HEADERS | {"authorization"}
    assert {h.lower() for h in cors["exposeHeaders"]} >= GRPC_WEB_RESPONSE_HEADERS


def test_every_policy_applies_to_the_gateway(rendered: dict[str, Rendered]) -> None:
    """What the CRDs' CEL rules (not run by the schema check) and Envoy Gateway's
    attachment need: each policy names the rendered Gateway."""
    production = rendered["production"]
    gateway, _ = _gateway(production)
    kinds = ("BackendTrafficPolicy", "ClientTrafficPolicy", "SecurityPolicy")
    for policy in (p for kind in kinds for p in production.of_kind(kind)):
        assert "targetRef" not in policy["spec"] and "targetSelectors" not in policy["spec"]
        assert policy["spec"]["targetRefs"] == [
            {
                "group": "gateway.networking.k8s.io",
                "kind": "Gateway",
                "name": gateway["metadata"]["name"],
            }
        ]


def test_the_proxies_alone_reach_the_grpc_ports(rendered: dict[str, Rendered]) -> None:
    production = rendered["production"]
    gateway, _ = _gateway(production)
    namespace = gateway["metadata"]["namespace"]
    proxy = {
        **PROXY_LABELS,
        "gateway.envoyproxy.io/owning-gateway-name": gateway["metadata"]["name"],
        "gateway.envoyproxy.io/owning-gateway-namespace": namespace,
    }
    other_gateway = {**proxy, "gateway.envoyproxy.io/owning-gateway-name": "other"}
    prometheus = {"app.kubernetes.io/name": "prometheus"}
    backends = {backend["name"]: backend for _, backend in _routed(production)}
    assert set(backends) == {"rummy-game", "rummy-matchmaker"}
    for backend in backends.values():
        pods, port, _ = _backend_pods(production, backend)
        name = backend["name"]
        assert _admits(production, pods, port, proxy, PROXY_NAMESPACE), name
        assert not _admits(production, pods, port, proxy, namespace), name
        assert not _admits(production, pods, port, other_gateway, PROXY_NAMESPACE), name
        assert not _admits(production, pods, port, {"app": "anything"}, "default"), name
        assert not _admits(production, pods, port, prometheus, "monitoring"), name
        # The proxies reach nothing else of the pods.
        assert not _admits(production, pods, "metrics", proxy, PROXY_NAMESPACE), name
    # In dev, with no gateway, any client may call.
    dev = rendered["dev"]
    for name in backends:
        pods, port, _ = _backend_pods(dev, backends[name])
        assert _admits(dev, pods, port, {"app": "anything"}, "default"), name


def test_the_readme_names_what_is_routed_and_where(rendered: dict[str, Rendered]) -> None:
    """deploy/README.md's table of the edge's routes, and its host, are the render's."""
    production = rendered["production"]
    text = (REPO / "deploy" / "README.md").read_text()
    section = text.split("## The edge (production)", 1)[1].split("\n## ", 1)[0]
    table = dict(re.findall(r"^\| `([\w.]+)` \| `([\w-]+)`", section, re.M))
    assert table == {service: backend["name"] for service, backend in _routed(production)}
    _, listener = _gateway(production)
    assert f"Host `{listener['hostname']}`, port {listener['port']}, TLS" in section
