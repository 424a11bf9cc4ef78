"""A bad DATABASE_URL stops every entry point (`make run`'s `rummy-dev` and the
deployed servers) with a message naming it, never a traceback, never the URL
itself (it holds a password)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from services.common.config import ConfigError, Env
from services.common.db import with_database

from .support import REPO

PASSWORD = "s3cret-pw"
SECRET = "launch-tests-token-secret-that-is-long-enough"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("not a url", "must look like postgresql://"),
        (f"mysql://app:{PASSWORD}@db/rummy", "(it starts with mysql://)"),
        (f"postgresql://app:{PASSWORD}@db:port/rummy", "port that is not a number"),
        (f"postgresql://app:{PASSWORD}@db:70000/rummy", "port that is not a number"),
        (f"postgresql://app:{PASSWORD}@db/rummy?sslmode=always", "sslmode must be one of"),
    ],
)
def test_a_malformed_database_url_is_named_without_its_password(url: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Env({"DATABASE_URL": url}).database_url()
    assert str(caught.value).startswith("DATABASE_URL") and says in str(caught.value)
    assert PASSWORD not in str(caught.value)


@pytest.mark.parametrize(
    "url",
    [
        "",
        "postgresql://postgres@127.0.0.1:5432/test",
        "postgres://app:pw@h1:5432,h2:5433/rummy?sslmode=verify-full",
        "postgresql://[::1]:5432/rummy",
        "postgresql:///rummy?host=/var/run/postgresql",
    ],
)
def test_good_database_urls_pass(url: str) -> None:
    assert Env({"DATABASE_URL": url}).database_url() == url


def _launch(entry: str, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", f"from services.launch import {entry}; raise SystemExit({entry}())"],
        cwd=REPO,
        env={
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "DATABASE_URL": url,
            "RUMMY_TOKEN_SECRET": SECRET,
            "RUMMY_GAME_LISTEN": "127.0.0.1:0",
            "RUMMY_MATCHMAKER_LISTEN": "127.0.0.1:0",
            "RUMMY_GAME_METRICS_PORT": "0",
            "RUMMY_MATCHMAKER_METRICS_PORT": "0",
            "RUMMY_LOG_FORMAT": "json",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("entry", ["dev_main", "game_main", "matchmaker_main"])
def test_every_entry_point_stops_on_a_malformed_database_url(entry: str) -> None:
    done = _launch(entry, f"postgresql://app:{PASSWORD}@db:port/rummy")
    assert done.returncode == 2, done.stderr
    assert "configuration error: DATABASE_URL" in done.stderr
    assert "Traceback" not in done.stderr and PASSWORD not in done.stderr + done.stdout


def test_a_database_that_does_not_exist_stops_start_up(database_url: str) -> None:
    """The database server refuses the URL: a setting to fix, not an outage to wait out."""
    missing = with_database(database_url, "rummy_no_such_database")
    done = _launch("dev_main", missing)
    assert done.returncode == 2, done.stderr
    assert "DATABASE_URL: PostgreSQL refused the connection" in done.stderr
    assert "rummy_no_such_database" in done.stderr and "Traceback" not in done.stderr
