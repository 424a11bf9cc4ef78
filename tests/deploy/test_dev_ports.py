"""`make run` (`rummy-dev`) with a port already taken says so in one line, naming
the port, what wanted it and the setting that moves it (before: a 30-line
traceback ending in `Address already in use`), and starts nothing."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import pytest

from .support import REPO

SETTINGS = {
    "RUMMY_GAME_LISTEN": "game service",
    "RUMMY_MATCHMAKER_LISTEN": "matchmaker",
    "RUMMY_GAME_METRICS_PORT": "metrics",
}


async def _dev_main(env: dict[str, str]) -> tuple[int | None, bytes, bytes]:
    """`rummy-dev` run with ``env`` alone: its exit code, stdout and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from services.launch import dev_main; raise SystemExit(dev_main())",
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode, out, err


@pytest.mark.parametrize("setting", sorted(SETTINGS))
async def test_a_taken_port_is_told_in_one_line(tmp_path: Path, setting: str) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            # Never reached: the ports are checked before any database is started.
            "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none",
            "RUMMY_DATA_DIR": str(tmp_path / "pg"),
            "RUMMY_GAME_LISTEN": "127.0.0.1:0",
            "RUMMY_MATCHMAKER_LISTEN": "127.0.0.1:0",
            "RUMMY_GAME_METRICS_PORT": "0",
        }
        env[setting] = str(port) if setting.endswith("PORT") else f"127.0.0.1:{port}"
        code, out, err = await _dev_main(env)
    assert code == 2
    assert out == b""
    lines = err.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"configuration error: port {port} ({SETTINGS[setting]}")
    assert "already in use" in lines[0] and setting in lines[0]


@pytest.mark.parametrize(
    ("secret", "told"),
    [
        (
            "",
            "configuration error: cannot keep the token secret in /dev/null/token-secret:"
            " Not a directory; set RUMMY_DATA_DIR to a folder of yours, or RUMMY_TOKEN_SECRET",
        ),
        (
            "a-secret-from-the-environment-long-enough-for-hs256",
            "embedded PostgreSQL: cannot make the data folder /dev/null/pg (/dev/null is"
            " not a folder): set RUMMY_DATA_DIR to a folder of yours",
        ),
    ],
)
async def test_a_data_folder_that_cannot_be_made_is_told_in_one_line(
    secret: str, told: str
) -> None:
    """Before: a traceback ending in NotADirectoryError, naming no setting."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "RUMMY_DATA_DIR": "/dev/null/pg",
        "RUMMY_TOKEN_SECRET": secret,
        "RUMMY_GAME_LISTEN": "127.0.0.1:0",
        "RUMMY_MATCHMAKER_LISTEN": "127.0.0.1:0",
        "RUMMY_GAME_METRICS_PORT": "0",
    }
    code, out, err = await _dev_main(env)
    assert code == (2 if told.startswith("configuration") else 1)
    assert out == b""
    assert err.decode().splitlines() == [told]
