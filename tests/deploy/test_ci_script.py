"""`.ci/run` on a bare machine: each system package `make test` needs is installed
when it is missing (as root, non-interactively, with no stdin), and only then;
`make test` runs last.

The script runs against stand-ins on a PATH of the test's own: `apt-get` records
what it is asked and "installs" the stand-ins of what it installs; `make` records
its targets, and `make promtool` fails until the package lists know the
prometheus package (`apt-get update`); `python3` lacks what the test says it
lacks."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .support import REPO

TOOLS = ("bash", "env", "dirname", "grep", "cat", "cp", "readlink", "touch")
"""Real commands the script and the stand-ins use."""
STANDINS = {
    "apt-get": """stdin=$(readlink /proc/$$/fd/0)
echo "apt-get $* frontend=$DEBIAN_FRONTEND stdin=$stdin" >> "$LOG"
if [ "$1" = update ]; then touch "$LISTS"; fi
if [ "$1" = install ]; then
    for package in "$@"; do
        if [ -e "$LATER/$package" ]; then cp "$LATER/$package" "$BIN/$package"; fi
    done
fi
exit 0""",
    "make": """echo "make $*" >> "$LOG"
if [ "$1" = promtool ] && [ ! -e "$LISTS" ]; then exit 1; fi
exit 0""",
    "id": 'echo "$UID_IS"',
    "kubectl": """echo '{"kustomizeVersion": "v5.4.2"}'""",
    "python3": """case "$*" in
    *ensurepip*) [ -e "$BIN/python3-venv" ] ;;
    *pip*--version*) [ -e "$BIN/python3-pip" ] ;;
esac""",
    "node": "exit 0",
    "npm": "exit 0",
    "openssl": "exit 0",
}
PACKAGES = {"make": "make", "node": "nodejs", "npm": "npm", "openssl": "openssl"}
"""Command -> the Debian package that provides it."""


def _script(path: Path, body: str) -> None:
    path.write_text(f"#!/bin/bash\n{body}\n")
    path.chmod(0o755)


def machine(
    tmp_path: Path, present: set[str], uid: int = 0, *, lists: bool = True
) -> tuple[Path, dict[str, str]]:
    """A copy of the repository's .ci/run, and the environment of a machine that has
    the commands in ``present`` (plus python3 without venv or pip unless named), and
    package lists that know the prometheus package if ``lists``."""
    repo, bin_dir, later = tmp_path / "repo", tmp_path / "bin", tmp_path / "later"
    for folder in (repo / ".ci", bin_dir, later):
        folder.mkdir(parents=True)
    shutil.copy2(REPO / ".ci" / "run", repo / ".ci" / "run")
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    for name in ("apt-get", "id", "kubectl", "python3"):
        _script(bin_dir / name, STANDINS[name])
    for command, package in PACKAGES.items():
        _script(later / package, STANDINS[command])
        if command in present:
            _script(bin_dir / command, STANDINS[command])
    if "promtool" in present:
        _script(bin_dir / "promtool", "exit 0")
    if lists:
        (tmp_path / "lists").touch()
    for marker in ("python3-venv", "python3-pip"):
        _script(later / marker, "exit 0")
        if marker in present:
            _script(bin_dir / marker, "exit 0")
    env = {
        "PATH": str(bin_dir),
        "BIN": str(bin_dir),
        "LATER": str(later),
        "LOG": str(tmp_path / "calls.log"),
        "LISTS": str(tmp_path / "lists"),
        "UID_IS": str(uid),
        "HOME": str(tmp_path),
    }
    return repo / ".ci" / "run", env


def run(script: Path, env: dict[str, str]) -> tuple[int, list[str], str]:
    done = subprocess.run(
        [str(script)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    log = Path(env["LOG"])
    calls = log.read_text().splitlines() if log.exists() else []
    return done.returncode, calls, done.stderr


def test_a_bare_machine_gets_every_missing_package_then_make_test(tmp_path: Path) -> None:
    # `make` too comes from apt-get: it must be there for the last step.
    script, env = machine(tmp_path, present=set())
    code, calls, stderr = run(script, env)
    assert code == 0, stderr
    [update, install, *rest] = calls
    assert update.startswith("apt-get update -qq ")
    assert install.startswith("apt-get install -y -qq python3-venv python3-pip make nodejs npm")
    assert " openssl" in install
    for call in (update, install):
        assert "frontend=noninteractive" in call and call.endswith("stdin=/dev/null")
    assert rest == ["make promtool", "make test"]


def test_a_machine_with_everything_installs_nothing(tmp_path: Path) -> None:
    if not Path("/etc/ssl/certs/ca-certificates.crt").exists():
        pytest.skip("this machine has no CA bundle: the script would install one")
    present = {"make", "node", "npm", "openssl", "python3-venv", "python3-pip", "promtool"}
    script, env = machine(tmp_path, present, lists=False)
    code, calls, stderr = run(script, env)
    assert code == 0, stderr
    assert calls == ["make test"]


def test_node_alone_missing_installs_node_alone(tmp_path: Path) -> None:
    if not Path("/etc/ssl/certs/ca-certificates.crt").exists():
        pytest.skip("this machine has no CA bundle: the script would install one")
    present = {"make", "npm", "openssl", "python3-venv", "python3-pip", "promtool"}
    script, env = machine(tmp_path, present)
    code, calls, stderr = run(script, env)
    assert code == 0, stderr
    assert [c.split(" frontend=")[0] for c in calls] == [
        "apt-get update -qq",
        "apt-get install -y -qq nodejs",
        "make test",
    ]


EVERYTHING_BUT_PROMTOOL = {"make", "node", "npm", "openssl", "python3-venv", "python3-pip"}


def test_promtool_missing_is_taken_from_the_package_lists(tmp_path: Path) -> None:
    if not Path("/etc/ssl/certs/ca-certificates.crt").exists():
        pytest.skip("this machine has no CA bundle: the script would install one")
    script, env = machine(tmp_path, EVERYTHING_BUT_PROMTOOL)
    code, calls, stderr = run(script, env)
    assert code == 0, stderr
    assert calls == ["make promtool", "make test"]


def test_package_lists_without_prometheus_are_refreshed_once(tmp_path: Path) -> None:
    if not Path("/etc/ssl/certs/ca-certificates.crt").exists():
        pytest.skip("this machine has no CA bundle: the script would install one")
    script, env = machine(tmp_path, EVERYTHING_BUT_PROMTOOL, lists=False)
    code, calls, stderr = run(script, env)
    assert code == 0, stderr
    assert [c.split(" frontend=")[0] for c in calls] == [
        "make promtool",
        "apt-get update -qq",
        "make promtool",
        "make test",
    ]
    assert calls[1].endswith("frontend=noninteractive stdin=/dev/null")


def test_without_root_or_sudo_it_names_what_is_missing(tmp_path: Path) -> None:
    script, env = machine(tmp_path, present={"make", "python3-venv", "python3-pip"}, uid=1000)
    code, calls, stderr = run(script, env)
    assert code == 1
    assert "missing nodejs npm openssl" in stderr and "run as root" in stderr
    assert calls == [], "nothing installed, nothing run"


def test_the_script_is_executable() -> None:
    assert os.access(REPO / ".ci" / "run", os.X_OK)
