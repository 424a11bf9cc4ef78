"""The committed TypeScript code is exactly what `make proto` produces now.

Like the Python code (tests/test_generated_fresh.py): edit the protos, run
`make proto`, commit both. The plugin (`protoc-gen-es`) is pinned by
tools/buf/package-lock.json and runs offline.
"""

from __future__ import annotations

import os
from pathlib import Path

from scripts import gen_ts

REPO = Path(__file__).resolve().parent.parent


def _tree(root: Path) -> dict[Path, str]:
    return {
        path.relative_to(root): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_generated_typescript_is_fresh(tmp_path: Path) -> None:
    fresh = tmp_path / "gen"
    gen_ts.generate(fresh)
    expected, committed = _tree(fresh), _tree(gen_ts.DEFAULT_OUT)

    missing = sorted(str(path) for path in expected.keys() - committed.keys())
    extra = sorted(str(path) for path in committed.keys() - expected.keys())
    both = expected.keys() & committed.keys()
    stale = sorted(str(path) for path in both if expected[path] != committed[path])
    assert not (missing or extra or stale), (
        f"{gen_ts.DEFAULT_OUT.relative_to(REPO)} is out of date (run `make proto`): "
        f"missing {missing}, unexpected {extra}, differing {stale}"
    )


def test_every_public_proto_has_its_module_under_a_do_not_edit_header() -> None:
    protos = sorted((REPO / "proto" / "rummy" / "v1").glob("*.proto"))
    modules = {
        path.relative_to(gen_ts.DEFAULT_OUT): path for path in gen_ts.DEFAULT_OUT.rglob("*.ts")
    }
    assert set(modules) == {Path("rummy/v1") / f"{p.stem}_pb.ts" for p in protos}
    for relative, path in modules.items():
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith("// Generated from proto/rummy/v1/") and first.endswith(
            "DO NOT EDIT."
        ), relative


def test_generated_typescript_has_one_home() -> None:
    # Only the generator's folder holds protoc-gen-es output.
    outside = []
    for folder, subfolders, names in os.walk(REPO / "clients"):
        subfolders[:] = [name for name in subfolders if name != "node_modules"]
        here = Path(folder)
        if here != gen_ts.DEFAULT_OUT and gen_ts.DEFAULT_OUT not in here.parents:
            outside += [
                (here / name).relative_to(REPO) for name in names if name.endswith("_pb.ts")
            ]
    assert not outside, (
        f"generated TypeScript outside {gen_ts.DEFAULT_OUT.relative_to(REPO)}: {outside}"
    )
