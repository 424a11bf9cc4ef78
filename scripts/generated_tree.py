"""What the code generators share: the folder each owns, written anew whole,
and their command line (`--out`)."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path


class GenerationError(RuntimeError):
    """The generator failed; its message says why."""


def replace_tree(out_dir: Path, files: Mapping[Path, str]) -> list[Path]:
    """Replace ``out_dir`` with ``files`` (by path relative to it); the files written.

    The folder is owned by its generator: anything else in it is removed, so a
    deleted ``.proto`` file cannot leave stale code behind.
    """
    if out_dir.exists():
        shutil.rmtree(out_dir)
    written = []
    for relative, text in sorted(files.items()):
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def run(
    argv: list[str] | None,
    *,
    doc: str | None,
    generate: Callable[[Path], list[Path]],
    default_out: Path,
    out_help: str,
) -> int:
    """A generator's command: ``--out`` (default ``default_out``), errors in one line."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0] if doc else None)
    parser.add_argument("--out", type=Path, default=default_out, help=out_help)
    args = parser.parse_args(argv)
    try:
        written = generate(args.out)
    except GenerationError as error:
        print(error, file=sys.stderr)
        return 1
    print(f"wrote {len(written)} files to {args.out}")
    return 0
