"""`make run` (`rummy-dev`) keeps the token secret it makes up in a file of its
own (mode 0600, beside the embedded database's folder), so that the clients'
tokens still work after a restart; a secret file other users may read is
refused with a one-line message, never used."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest

from services.common.config import ConfigError
from services.common.pb.rummy.v1 import auth_pb2, auth_pb2_grpc
from services.common.secret_file import kept_secret, secret_path

from .support import REPO

STARTED_S = 60.0
GAME_LINE = re.compile(rb"game service\s+127\.0\.0\.1:(\d+)")


def _environment(data_dir: Path, dsn: str) -> dict[str, str]:
    """`make run`'s environment with no RUMMY_TOKEN_SECRET, on ports of its choosing."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": dsn,
        "RUMMY_DATA_DIR": str(data_dir / "pg"),
        "RUMMY_GAME_LISTEN": "127.0.0.1:0",
        "RUMMY_MATCHMAKER_LISTEN": "127.0.0.1:0",
        "RUMMY_GAME_METRICS_PORT": "0",
        "RUMMY_LOG_FORMAT": "json",
    }


@asynccontextmanager
async def dev_server(data_dir: Path, dsn: str) -> AsyncIterator[str]:
    """`rummy-dev` running; yields its game service's address, stops it with Ctrl-C."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from services.launch import dev_main; raise SystemExit(dev_main())",
        cwd=REPO,
        env=_environment(data_dir, dsn),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(STARTED_S):
            while (found := GAME_LINE.search(await process.stdout.readline())) is None:
                assert process.returncode is None, "rummy-dev stopped"
        yield f"127.0.0.1:{found.group(1).decode()}"
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
            async with asyncio.timeout(STARTED_S):
                await process.wait()


async def _sign_in(address: str) -> str:
    async with grpc.aio.insecure_channel(address) as channel:
        reply = await auth_pb2_grpc.AuthServiceStub(channel).Login(
            auth_pb2.LoginRequest(device_id="dev-secret-test", display_name="Dev"), timeout=10
        )
    return str(reply.token)


async def _refreshed(address: str, token: str) -> bool:
    async with grpc.aio.insecure_channel(address) as channel:
        try:
            await auth_pb2_grpc.AuthServiceStub(channel).Refresh(
                auth_pb2.RefreshRequest(token=token),
                metadata=(("authorization", f"Bearer {token}"),),
                timeout=10,
            )
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.UNAUTHENTICATED, error
            return False
    return True


async def test_a_token_from_make_run_still_works_after_a_restart(
    tmp_path: Path, fresh_dsn: str
) -> None:
    async with dev_server(tmp_path, fresh_dsn) as address:
        token = await _sign_in(address)
    kept = secret_path(str(tmp_path / "pg"))
    assert kept == tmp_path / "token-secret"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    async with dev_server(tmp_path, fresh_dsn) as address:
        assert await _refreshed(address, token), "the restarted server refused the token"
    # A new secret (the file deleted) makes every earlier token invalid, as it should.
    kept.unlink()
    async with dev_server(tmp_path, fresh_dsn) as address:
        assert not await _refreshed(address, token)


def test_a_made_up_secret_is_kept_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "data" / "token-secret"
    first = kept_secret(path)
    assert len(first.encode()) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert kept_secret(path) == first
    assert [p.name for p in path.parent.iterdir()] == ["token-secret"], "no temporary left"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_a_secret_file_others_may_read_or_write_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "token-secret"
    path.write_text("x" * 64)
    path.chmod(mode)
    with pytest.raises(ConfigError) as caught:
        kept_secret(path)
    message = str(caught.value)
    assert "\n" not in message
    assert f"mode {mode:04o}" in message and f"chmod 600 {path}" in message
    assert path.read_text() == "x" * 64, "left as it was"


def test_a_short_secret_or_a_folder_in_its_place_is_refused(tmp_path: Path) -> None:
    short = tmp_path / "short"
    short.write_text("too short")
    short.chmod(0o600)
    with pytest.raises(ConfigError, match="shorter than 32 bytes"):
        kept_secret(short)
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(ConfigError, match="must be a plain file"):
        kept_secret(folder)


async def test_make_run_stops_on_a_secret_file_others_may_read(
    tmp_path: Path, fresh_dsn: str
) -> None:
    path = tmp_path / "token-secret"
    path.write_text("y" * 64)
    path.chmod(0o644)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from services.launch import dev_main; raise SystemExit(dev_main())",
        cwd=REPO,
        env=_environment(tmp_path, fresh_dsn),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), STARTED_S)
    assert process.returncode == 2
    lines = err.decode().strip().splitlines()
    assert lines == [
        f"configuration error: {path} holds the token secret but other users may read or"
        f" change it (mode 0644): run `chmod 600 {path}`, or delete it to make a new one"
    ]
