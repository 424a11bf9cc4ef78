"""Regenerate the TypeScript code of the public API (Connect-ES, protobuf-es v2).

    python -m scripts.gen_ts            # what `make proto` runs
    python -m scripts.gen_ts --out DIR  # somewhere else (the freshness test)

``buf generate`` runs the template ``proto/gen/buf.gen.ts.yaml`` with the
``protoc-gen-es`` plugin pinned in ``tools/buf`` (``npm ci --prefix tools/buf``),
so nothing is fetched from the network. The plugin's output goes to the folder
the template names (``clients/typescript/src/gen``), each file under a
do-not-edit header. The output depends only on the ``.proto`` files and the
pinned plugin, which is what lets a test regenerate it and fail on any
difference.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from scripts.generated_tree import GenerationError, replace_tree, run

REPO = Path(__file__).resolve().parent.parent
BUF = REPO / "tools" / "buf" / "node_modules" / ".bin" / "buf"
TEMPLATE = REPO / "proto" / "gen" / "buf.gen.ts.yaml"
HEADER = (
    "// Generated from proto/{source} by `make proto` (scripts/gen_ts.py,"
    " proto/gen/buf.gen.ts.yaml). DO NOT EDIT.\n"
)


def template_out() -> Path:
    """The output folder the template names, relative to the repository."""
    config: dict[str, Any] = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))
    (plugin,) = config["plugins"]
    return Path(plugin["out"])


DEFAULT_OUT = REPO / template_out()


def _source_of(generated: Path) -> str:
    # rummy/v1/game_pb.ts comes from rummy/v1/game.proto.
    return generated.with_name(generated.name.removesuffix("_pb.ts") + ".proto").as_posix()


def render() -> dict[Path, str]:
    """Every generated file, by path relative to the output folder."""
    if not BUF.exists():
        raise GenerationError(
            f"{BUF.relative_to(REPO)} is missing: run `npm ci --prefix tools/buf`"
        )
    with tempfile.TemporaryDirectory() as tmp:
        command = [str(BUF), "generate", "--template", str(TEMPLATE), "--output", tmp]
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise GenerationError(f"buf generate failed ({done.returncode}):\n{done.stderr}")
        raw = Path(tmp) / template_out()
        return {
            path.relative_to(raw): HEADER.format(source=_source_of(path.relative_to(raw)))
            + path.read_text(encoding="utf-8")
            for path in sorted(raw.rglob("*"))
            if path.is_file()
        }


def generate(out_dir: Path) -> list[Path]:
    """Replace ``out_dir`` with freshly generated code; returns the files written.

    The folder is owned by this script: anything else in it is removed, so a
    deleted ``.proto`` file cannot leave stale code behind.
    """
    return replace_tree(out_dir, render())


def main(argv: list[str] | None = None) -> int:
    return run(
        argv, doc=__doc__, generate=generate, default_out=DEFAULT_OUT, out_help="output folder"
    )


if __name__ == "__main__":
    sys.exit(main())
