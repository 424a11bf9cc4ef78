"""The Dockerfile, read as text: no Docker engine is needed (nor run) here.

It must install the dependencies pinned with their hashes in the lock file and
the project's wheel in a builder stage, and run from a slim Python 3.11 as a
numeric non-root user, with nothing fetched from URLs and no build tools in the
final image. checkov scans it too (test_manifests.py); test_lock.py checks the
lock file itself."""

from __future__ import annotations

import fnmatch
import re
import shlex
from dataclasses import dataclass, field

from services.common.config import SETTINGS

from .support import REPO

DEFAULTS = {s.name: s.default for s in SETTINGS}
BUILD_TOOLS = ("gcc", "g++", "make", "build-essential", "python3-dev", "apt-get", "curl", "wget")


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def args(self, keyword: str) -> list[str]:
        return [a for k, a in self.instructions if k == keyword]


def _instructions() -> list[tuple[str, str]]:
    """(KEYWORD, arguments) with continuation lines joined and comments dropped."""
    result = []
    pending = ""
    for raw in (REPO / "Dockerfile").read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, arguments = line.partition(" ")
        result.append((keyword.upper(), arguments.strip()))
    assert not pending, "Dockerfile ends inside a continued line"
    return result


def _stages() -> list[Stage]:
    stages: list[Stage] = []
    for keyword, arguments in _instructions():
        if keyword == "FROM":
            words = arguments.split()
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else ""
            stages.append(Stage(words[0], name))
        else:
            assert stages, f"{keyword} before the first FROM"
            stages[-1].instructions.append((keyword, arguments))
    return stages


def test_builder_stage_builds_the_wheel() -> None:
    builder, *_ = _stages()
    assert builder.name == "builder"
    runs = " ".join(builder.args("RUN"))
    assert "pip wheel" in runs and "--no-deps" in runs
    assert "--only-binary=:all:" in runs, "dependencies must come as wheels, not be compiled"


def test_builder_installs_the_lock_with_hashes_and_nothing_else() -> None:
    builder, *_ = _stages()
    runs = builder.args("RUN")
    copied = [a.split()[0] for a in builder.args("COPY")]
    assert "deploy/requirements-image.txt" in copied
    [locked] = [r for r in runs if "-r requirements-image.txt" in r]
    assert "--require-hashes" in locked and "--only-binary=:all:" in locked
    [project] = [r for r in runs if "/wheels" in r and "install" in r]
    install = project.split("pip install", 1)[1].split("&&")[0]
    # Only the wheel just built: whatever it needs beyond the lock fails the build.
    assert "--no-index" in install and "--find-links=/wheels" in install
    assert "'rummy[server,otel]'" in install, "the servers' and traces' extras, never local or dev"
    assert "pip check" in project
    assert runs.index(locked) < runs.index(project)


def test_runtime_is_slim_python_311_as_a_numeric_non_root_user() -> None:
    stages = _stages()
    assert len(stages) >= 2
    runtime = stages[-1]
    assert re.fullmatch(r"python:3\.11(\.\d+)?-slim(-\w+)?", runtime.base), runtime.base
    [user] = runtime.args("USER")
    assert re.fullmatch(r"\d+(:\d+)?", user), f"USER {user} is not numeric"
    assert all(int(part) > 0 for part in user.split(":"))
    assert any(a.startswith("--from=builder ") for a in runtime.args("COPY"))


def test_runtime_has_no_build_tools_and_nothing_fetched() -> None:
    stages = _stages()
    for stage in stages:
        assert not stage.args("ADD"), "use COPY; ADD may fetch URLs and unpack archives"
    runtime = stages[-1]
    for command in runtime.args("RUN"):
        words = set(shlex.split(command.replace("&&", " ")))
        assert not words & set(BUILD_TOOLS), command
        assert "pip" not in command, "the runtime stage installs nothing"


def test_runtime_writes_nothing_outside_tmp() -> None:
    runtime = _stages()[-1]
    env = " ".join(runtime.args("ENV"))
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    assert "HOME=/tmp" in env
    assert runtime.args("WORKDIR") == ["/tmp"]


def test_command_and_ports_match_the_project() -> None:
    runtime = _stages()[-1]
    [command] = runtime.args("CMD")
    assert command == '["rummy-game"]', "exec form, a console script of pyproject.toml"
    exposed = {int(p) for a in runtime.args("EXPOSE") for p in a.split()}
    expected = {
        int(DEFAULTS["RUMMY_GAME_LISTEN"].rpartition(":")[2]),
        int(DEFAULTS["RUMMY_MATCHMAKER_LISTEN"].rpartition(":")[2]),
        int(DEFAULTS["RUMMY_GAME_METRICS_PORT"]),
        int(DEFAULTS["RUMMY_MATCHMAKER_METRICS_PORT"]),
    }
    assert exposed == expected


def test_dockerignore_lets_in_exactly_what_the_build_copies() -> None:
    rules = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "*", "an allow-list keeps .git, .venv and local data out"

    def included(path: str) -> bool:
        verdict = True
        for rule in rules:
            negated = rule.startswith("!")
            pattern = rule.lstrip("!").rstrip("/")
            if fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/"):
                verdict = negated
        return verdict

    for stage in _stages():
        for arguments in stage.args("COPY"):
            if arguments.startswith("--from="):
                continue
            *sources, _ = arguments.split()
            for source in sources:
                if "[" in source:  # optional file (README.m[d])
                    continue
                assert included(source), f"COPY {source} is excluded by .dockerignore"
    for private in (".git", ".venv", "tests", "deploy", "data", ".env"):
        assert not included(private), private
