"""A bad setting stops start-up with a message naming the variable."""

from __future__ import annotations

import subprocess
import sys

import pytest

from services.common.config import ConfigError, Env


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("RUMMY_DB_POOL_SIZE", "lots", "not a whole number"),
        ("RUMMY_GAME_LISTEN", "nowhere", "host:port"),
        ("RUMMY_ALLOW_TEST_DECKS", "perhaps", "true or false"),
        ("RUMMY_LOG_FORMAT", "xml", "one of"),
        ("RUMMY_BOT_PACE", "slow", "not a number"),
        ("RUMMY_BOT_PACE", "11", "between 0 and 10"),
        ("RUMMY_BOT_PACE", "nan", "between 0 and 10"),
    ],
)
def test_a_bad_value_names_the_variable(name: str, value: str, words: str) -> None:
    env = Env({name: value})
    with pytest.raises(ConfigError) as caught:
        if name == "RUMMY_DB_POOL_SIZE":
            env.integer(name, low=2, high=200)
        elif name == "RUMMY_GAME_LISTEN":
            env.address(name)
        elif name == "RUMMY_ALLOW_TEST_DECKS":
            env.flag(name)
        elif name == "RUMMY_BOT_PACE":
            env.number(name, high=10.0)
        else:
            env.choice(name, ("auto", "json", "console"))
    assert name in str(caught.value) and words in str(caught.value)


def test_the_game_server_refuses_to_start_without_a_token_secret() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from services.launch import game_main; raise SystemExit(game_main())",
        ],
        env={"PATH": "/usr/bin:/bin", "RUMMY_TOKEN_SECRET": "short", "RUMMY_LOG_FORMAT": "json"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "RUMMY_TOKEN_SECRET" in done.stderr
