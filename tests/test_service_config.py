"""proto/service_config.json, the gRPC service config every app loads: gRPC
accepts it, it names only RPCs of the protos, and it retries exactly the calls
that are safe to make again, reads and actions with a `request_id` (AIP-155),
never a stream. The copy the client ships (services/common/pb) is kept fresh
by tests/test_generated_fresh.py."""

from __future__ import annotations

import importlib
import json
import tomllib
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import MethodDescriptor

from clients.cli.channels import service_config
from scripts import gen_proto
from services.common.pb.rummy.v1 import game_pb2, game_pb2_grpc
from tests.routing import routed_server

CONFIG = gen_proto.PROTO_ROOT / gen_proto.SERVICE_CONFIG
PUBLIC = Path("rummy") / "v1"


def _config() -> dict[str, Any]:
    config: dict[str, Any] = json.loads(CONFIG.read_text(encoding="utf-8"))
    return config


def _methods() -> dict[str, MethodDescriptor]:
    """Every RPC of the public protos, by `package.Service/Method`."""
    methods = {}
    for proto in gen_proto.proto_files():
        if proto.parent.relative_to(gen_proto.PROTO_ROOT) != PUBLIC:
            continue  # the operators' and the services' packages: no app calls them
        module = importlib.import_module(f"{gen_proto.OUT_PACKAGE}.rummy.v1.{proto.stem}_pb2")
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                methods[f"{service.full_name}/{method.name}"] = method
    return methods


def _retried() -> list[str]:
    return [
        f"{name['service']}/{name['method']}"
        for entry in _config()["methodConfig"]
        if "retryPolicy" in entry
        for name in entry["name"]
    ]


def test_the_config_names_only_rpcs_of_the_protos_each_once() -> None:
    methods = _methods()
    assert len(methods) > 10, "the descriptors were read"
    names = [name for entry in _config()["methodConfig"] for name in entry["name"]]
    assert all(set(name) == {"service", "method"} for name in names), "no whole service"
    paths = [f"{name['service']}/{name['method']}" for name in names]
    assert sorted(set(paths) - methods.keys()) == [], "names no RPC of the protos"
    assert len(paths) == len(set(paths))


def test_retries_cover_what_is_safe_to_make_again_and_no_stream() -> None:
    methods = _methods()
    streams = {p for p, m in methods.items() if m.client_streaming or m.server_streaming}
    reads = {p for p in methods if p.split("/")[1].startswith(("Get", "List"))}
    keyed = {p for p, m in methods.items() if "request_id" in m.input_type.fields_by_name}
    assert {"rummy.v1.GameService/GetTable", "rummy.v1.MatchmakerService/GetTicket"} <= reads
    assert "rummy.v1.GameService/Discard" in keyed

    retried = set(_retried())
    assert not retried & streams, "a stream is resumed by the app, from its last event"
    assert retried == (reads | keyed) - streams


def test_the_policy_retries_unavailable_alone_and_balances_round_robin() -> None:
    config = _config()
    assert config["loadBalancingConfig"][0] == {"round_robin": {}}
    policies = [e["retryPolicy"] for e in config["methodConfig"] if "retryPolicy" in e]
    assert policies
    for policy in policies:
        assert policy["retryableStatusCodes"] == ["UNAVAILABLE"]
        assert 2 <= policy["maxAttempts"] <= 5, "gRPC caps attempts at 5"


def test_the_client_loads_the_copy_its_package_ships() -> None:
    # Package data: what lets a client installed from a wheel find it.
    assert json.loads(service_config()) == _config()
    pyproject = tomllib.loads((gen_proto.REPO / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = pyproject["tool"]["setuptools"]["package-data"][gen_proto.OUT_PACKAGE]
    assert gen_proto.SERVICE_CONFIG.name in shipped


@pytest.mark.parametrize(
    ("config", "works"),
    [
        (CONFIG.read_text(encoding="utf-8"), True),
        ('{"loadBalancingConfig": [{"nope": {}}]}', False),
    ],
    ids=["published", "broken"],
)
async def test_grpc_accepts_the_config_and_retries_by_it(config: str, works: bool) -> None:
    # A server whose first GetTable and first Watch answer UNAVAILABLE: the
    # read is made again by the channel, the stream is left to the app.
    asked: dict[str, int] = {}

    def route(method: str) -> Any:
        asked[method] = asked.get(method, 0) + 1
        first = asked[method] == 1

        async def get_table(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
            if first:
                await context.abort(grpc.StatusCode.UNAVAILABLE, "Briefly away.")
            return game_pb2.GetTableResponse().SerializeToString()

        async def watch(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            if first:
                await context.abort(grpc.StatusCode.UNAVAILABLE, "Briefly away.")
            yield game_pb2.WatchResponse().SerializeToString()

        if method.endswith("/GetTable"):
            return grpc.unary_unary_rpc_method_handler(get_table)
        return grpc.unary_stream_rpc_method_handler(watch)

    async with routed_server(route) as target:
        options = [("grpc.service_config", config), ("grpc.enable_retries", 1)]
        async with grpc.aio.insecure_channel(target, options=options) as channel:
            stub = game_pb2_grpc.GameServiceStub(channel)
            request = game_pb2.GetTableRequest(table_id="t")
            if not works:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.GetTable(request, timeout=10)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                assert "service config" in (refused.value.details() or "")
                return
            await stub.GetTable(request, timeout=10)
            watch = stub.Watch(game_pb2.WatchRequest(table_id="t"), timeout=10)
            with pytest.raises(grpc.aio.AioRpcError) as dropped:
                await watch.read()
            assert dropped.value.code() == grpc.StatusCode.UNAVAILABLE

    assert asked == {"/rummy.v1.GameService/GetTable": 2, "/rummy.v1.GameService/Watch": 1}
