"""The layer rules (the import contracts in pyproject.toml) hold, and each one
bites: a copy of the code given one wrong import per contract breaks them all."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

WRONG_IMPORTS = {
    "engine": ("services/game/rules/probe.py", "import grpc\n"),
    # The engine's modules are not its public face, even when imported as names.
    "client": ("clients/cli/probe.py", "from services.game.rules import melds\n"),
    # The generated code is the client's, but for the services' own package.
    "app": (
        "clients/cli/probe_app.py",
        "from services.common.pb.rummy.internal.v1 import tables_pb2\n",
    ),
    "matchmaker": (
        "services/matchmaker/probe.py",
        "from services.game.rules.levels import BotLevel\n",
    ),
    "game": ("services/game/probe.py", "from clients.cli import render\n"),
    "common": ("services/common/probe.py", "from services.game import convert\n"),
    "wire": ("services/common/wire/probe.py", "from services.common import errors\n"),
}


def lint_imports(where: Path) -> subprocess.CompletedProcess[str]:
    # PYTHONPATH first: the copy's packages, not the checkout's, make the graph.
    env = {**os.environ, "PYTHONPATH": str(where)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", "--no-cache"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def contract_ids() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return {c["id"] for c in config["tool"]["importlinter"]["contracts"]}


def test_every_contract_has_a_wrong_import_to_prove_it() -> None:
    assert contract_ids() == set(WRONG_IMPORTS)


def test_the_code_keeps_every_layer_rule() -> None:
    run = lint_imports(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"Contracts: {len(WRONG_IMPORTS)} kept, 0 broken." in run.stdout


def test_each_contract_breaks_on_a_wrong_import(tmp_path: Path) -> None:
    for package in ("services", "clients"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    for path, source in WRONG_IMPORTS.values():
        (tmp_path / path).write_text(source)
    run = lint_imports(tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"Contracts: 0 kept, {len(WRONG_IMPORTS)} broken." in run.stdout, run.stdout
    for path, _ in WRONG_IMPORTS.values():
        probe = path.removesuffix(".py").replace("/", ".")
        assert probe in run.stdout, f"{probe} is not named as the culprit"
