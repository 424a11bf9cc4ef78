"""The code-generation templates of proto/gen say what proto/README.md promises.

Swift, Kotlin and Dart use remote plugins of the Buf Schema Registry, which
need the network: their templates are only read here, never run. The
TypeScript one runs offline in `make proto` (tests/test_generated_typescript.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
TEMPLATES = REPO / "proto" / "gen"
PUBLIC_INPUT = [{"directory": "proto", "paths": ["proto/rummy/v1"]}]
REMOTE = {
    "swift": {"buf.build/apple/swift", "buf.build/grpc/swift-protobuf"},
    "kotlin": {
        "buf.build/protocolbuffers/java",
        "buf.build/protocolbuffers/kotlin",
        "buf.build/grpc/java",
        "buf.build/grpc/kotlin",
    },
    "dart": {"buf.build/protocolbuffers/dart"},
}
PINNED = re.compile(r"^(buf\.build/[\w-]+/[\w-]+):v\d+(\.\d+)*$")


def _template(language: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((TEMPLATES / f"buf.gen.{language}.yaml").read_text())
    return loaded


def test_one_template_per_language() -> None:
    found = {path.name for path in TEMPLATES.glob("buf.gen.*.yaml")}
    assert found == {f"buf.gen.{language}.yaml" for language in [*REMOTE, "ts"]}


@pytest.mark.parametrize("language", [*REMOTE, "ts"])
def test_template_generates_the_public_api_only(language: str) -> None:
    template = _template(language)
    assert template["version"] == "v2"
    # Apps get rummy.v1, never what the services keep between themselves.
    assert template["inputs"] == PUBLIC_INPUT


@pytest.mark.parametrize("language", list(REMOTE))
def test_remote_template_names_its_plugins_pinned(language: str) -> None:
    plugins = _template(language)["plugins"]
    refs = [plugin["remote"] for plugin in plugins]
    assert all(PINNED.match(ref) for ref in refs), f"pin every plugin to a version: {refs}"
    assert {PINNED.match(ref).group(1) for ref in refs if PINNED.match(ref)} == REMOTE[language]
    # Outputs stay in the git-ignored build/ folder until copied into an app.
    assert {plugin["out"] for plugin in plugins} == {f"build/gen/{language}"}


def test_kotlin_targets_android_lite_runtime() -> None:
    assert all("lite" in plugin["opt"] for plugin in _template("kotlin")["plugins"])


def test_swift_generates_clients_only() -> None:
    (grpc,) = [p for p in _template("swift")["plugins"] if "grpc/swift" in p["remote"]]
    assert "Server=false" in grpc["opt"]


def test_dart_generates_grpc_stubs_and_the_well_known_types() -> None:
    (plugin,) = _template("dart")["plugins"]
    assert "grpc" in plugin["opt"]
    assert plugin["include_imports"] is True and plugin["include_wkt"] is True


def test_typescript_template_uses_the_pinned_npm_plugin() -> None:
    (plugin,) = _template("ts")["plugins"]
    assert plugin["local"] == "tools/buf/node_modules/.bin/protoc-gen-es"
    assert plugin["out"] == "clients/typescript/src/gen"
    assert {"target=ts", "import_extension=js"} <= set(plugin["opt"])
    lock = json.loads((REPO / "tools" / "buf" / "package-lock.json").read_text())
    assert "node_modules/@bufbuild/protoc-gen-es" in lock["packages"]


@pytest.mark.parametrize("language", [*REMOTE, "ts"])
def test_readme_documents_the_template(language: str) -> None:
    readme = (REPO / "proto" / "README.md").read_text(encoding="utf-8")
    if language == "ts":
        assert "make proto" in readme and "proto/gen/buf.gen.ts.yaml" in readme
    else:
        assert f"buf generate --template proto/gen/buf.gen.{language}.yaml" in readme
