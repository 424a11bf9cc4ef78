"""`buf breaking` holds the API to its last release: a change that would break an
installed app fails `make test`.

The release is a buf image kept in the repository (`proto/released/v1.binpb`),
so the check needs no network and no git tags. It is replaced only on a
deliberate release (see proto/README.md, "Releasing the API"). The rules are
those of buf.yaml (`breaking: FILE`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

REPO = Path(__file__).resolve().parent.parent
BUF = REPO / "tools" / "buf" / "node_modules" / ".bin" / "buf"
RELEASED = REPO / "proto" / "released" / "v1.binpb"
RELEASED_FILES = ("auth", "cards", "game", "matchmaker", "table")


def _breaking(workspace: Path) -> subprocess.CompletedProcess[str]:
    assert BUF.exists(), f"{BUF.relative_to(REPO)} is missing: run `npm ci --prefix tools/buf`"
    return subprocess.run(
        [str(BUF), "breaking", str(workspace), "--against", str(RELEASED), "--error-format=json"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _copy(tmp_path: Path) -> Path:
    """The workspace as it is now (buf.yaml and proto/), to change in a test."""
    shutil.copy(REPO / "buf.yaml", tmp_path / "buf.yaml")
    shutil.copytree(REPO / "proto", tmp_path / "proto", ignore=shutil.ignore_patterns("released"))
    return tmp_path


def _edit(workspace: Path, file: str, old: str, new: str) -> None:
    path = workspace / "proto" / "rummy" / "v1" / file
    text = path.read_text(encoding="utf-8")
    changed, count = re.subn(re.escape(old), new, text)
    assert count == 1, f"{old!r} should occur once in {file}"
    path.write_text(changed, encoding="utf-8")


def test_released_image_holds_the_v1_api() -> None:
    # An empty or truncated image would let every change pass.
    released = descriptor_pb2.FileDescriptorSet.FromString(RELEASED.read_bytes())
    files = {f.name: f for f in released.file}
    assert {f"rummy/v1/{name}.proto" for name in RELEASED_FILES} <= files.keys()
    services = {s.name for f in files.values() if f.package == "rummy.v1" for s in f.service}
    assert {"AuthService", "GameService", "MatchmakerService"} <= services


def test_the_protos_keep_the_released_api() -> None:
    done = _breaking(REPO)
    assert done.returncode == 0, (
        "a change breaks the released API (proto/released/v1.binpb); add instead of "
        "changing, or release a new version deliberately (proto/README.md):\n"
        + done.stdout
        + done.stderr
    )


@pytest.mark.parametrize(
    ("file", "old", "new", "rule"),
    [
        # Card.id moves from field 1 to field 3: every app reads ids as zero.
        ("cards.proto", "uint32 id = 1;", "uint32 id = 3;", "FIELD_NO_DELETE"),
        # Card.code changes type: old apps misread it.
        ("cards.proto", "string code = 2;", "int32 code = 2;", "FIELD_SAME_TYPE"),
    ],
    ids=["field-renumbered", "field-retyped"],
)
def test_a_breaking_change_fails(tmp_path: Path, file: str, old: str, new: str, rule: str) -> None:
    workspace = _copy(tmp_path)
    _edit(workspace, file, old, new)
    done = _breaking(workspace)
    assert done.returncode != 0, "buf breaking let a breaking change through"
    found = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert rule in {f["type"] for f in found}, done.stdout + done.stderr
