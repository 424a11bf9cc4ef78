"""Commands the client tells the player to run: with the options that reach the
same servers, so what is printed works when it is copied (by the player, or by
the friends a host invites)."""

from __future__ import annotations

import shlex
from pathlib import Path

DEFAULT_SERVER = "127.0.0.1:50052"
"""The matchmaker `--server` defaults to when $RUMMY_SERVER is not set."""


def command_line(
    *words: str,
    server: str,
    tls: bool = False,
    game: str = "",
    config_dir: Path | None = None,
) -> str:
    """`rummy WORDS`, with `--server` unless it is the built-in default (a friend's
    $RUMMY_SERVER is not ours to know), `--game` when one was given, `--tls`, and
    `--config-dir` when given (the same player, on this device); quoted for a shell."""
    parts = ["rummy", *words]
    if server != DEFAULT_SERVER:
        parts += ["--server", server]
    if game:
        parts += ["--game", game]
    if tls:
        parts.append("--tls")
    if config_dir is not None:
        parts += ["--config-dir", str(config_dir)]
    return shlex.join(parts)
