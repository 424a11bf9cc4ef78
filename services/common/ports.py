"""Ports a process is about to listen on, checked free before anything starts,
so that a second `make run` says in one line which port is taken and by what
setting, instead of a traceback from deep inside a server's start."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass

from .config import ConfigError

PROBE_S = 0.5
"""How long a connection to a port is tried: a listener on this machine answers at once."""


@dataclass(frozen=True, slots=True)
class Listen:
    """One address to listen on: ``HOST:PORT`` (port 0: any free one, not checked),
    what listens there, and the setting that moves it."""

    address: str
    what: str
    setting: str


def taken(address: str) -> bool:
    """Whether something already listens on ``address`` (``HOST:PORT``): it takes a
    connection. (A bind would not tell: gRPC servers share their ports with
    SO_REUSEPORT, so a second one would quietly take half the calls.)"""
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    if host in ("", "0.0.0.0", "::"):
        host = "127.0.0.1"
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_S):
            return True
    except OSError:
        return False


def check_free(listens: Sequence[Listen]) -> None:
    """Raise `ConfigError` naming the first address already in use."""
    for listen in listens:
        port = listen.address.rpartition(":")[2]
        if not port.isdigit() or int(port) == 0:
            continue
        if taken(listen.address):
            raise ConfigError(
                f"port {port} ({listen.what}, {listen.address}) is already in use:"
                f" is another `make run` or server going? Stop it, or set"
                f" {listen.setting} to another address."
            )
