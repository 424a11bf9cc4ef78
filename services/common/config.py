"""Configuration from environment variables: every setting, its default and its check.

A bad value stops start-up with a message naming the variable; the README's
configuration table is `settings_table()` (tests/test_readme.py keeps them equal)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit


class ConfigError(ValueError):
    """A setting has a value the service cannot use."""


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    default: str
    help: str


SETTINGS = (
    Setting("DATABASE_URL", "", "PostgreSQL URL; unset: an embedded PostgreSQL in RUMMY_DATA_DIR"),
    Setting("RUMMY_DATA_DIR", "data/pg", "Data folder of the embedded PostgreSQL"),
    Setting(
        "RUMMY_TOKEN_SECRET",
        "",
        "Secret signing the bearer tokens (32+ bytes, same on "
        "every replica); unset, `make run` makes one up and keeps it (mode 0600) in"
        " token-secret beside RUMMY_DATA_DIR",
    ),
    Setting("RUMMY_GAME_LISTEN", "0.0.0.0:50051", "Address the game server listens on"),
    Setting("RUMMY_MATCHMAKER_LISTEN", "0.0.0.0:50052", "Address the matchmaker listens on"),
    Setting(
        "RUMMY_GAME_TARGET", "127.0.0.1:50051", "Where the matchmaker reaches the game service"
    ),
    Setting(
        "RUMMY_GAME_PUBLIC_TARGET",
        "",
        "Game address told to players in a match; unset: RUMMY_GAME_TARGET",
    ),
    Setting(
        "RUMMY_GAME_METRICS_PORT", "9101", "Prometheus /metrics port of the game server (0: off)"
    ),
    Setting(
        "RUMMY_MATCHMAKER_METRICS_PORT",
        "9102",
        "Prometheus /metrics port of the matchmaker (0: off); `make run` serves both"
        " services' metrics on RUMMY_GAME_METRICS_PORT",
    ),
    Setting(
        "RUMMY_ALLOW_TEST_DECKS",
        "false",
        "Accept an explicit deck order in the internal CreateTable"
        " (tests only, never in production)",
    ),
    Setting("RUMMY_TICKET_TTL_S", "300", "Seconds a queued ticket waits before it expires"),
    Setting(
        "RUMMY_BOT_DELAY_MS",
        "800",
        "How long after a turn begins a bot plays it whole (tables of bots alone,"
        " or RUMMY_BOT_PACE 0)",
    ),
    Setting(
        "RUMMY_BOT_PACE",
        "1",
        "Where a person plays, bots play one action at a time and think 1.5-3 s before"
        " the draw and 1-2 s before each other action, times this (0 to 10; 0: each"
        " turn whole, after RUMMY_BOT_DELAY_MS)",
    ),
    Setting(
        "RUMMY_EVENT_RETENTION_DAYS",
        "30",
        "Days finished tables (with their event logs) and ended tickets are kept"
        " (0: forever); their stored request answers go after an hour",
    ),
    Setting("RUMMY_DB_POOL_SIZE", "10", "PostgreSQL connections per process"),
    Setting("RUMMY_SHUTDOWN_GRACE_S", "10", "Seconds running calls get to finish on shutdown"),
    Setting(
        "RUMMY_RATE_PER_PLAYER",
        "50/100",
        "Calls per second/burst allowed to one signed-in player (0: no limit)",
    ),
    Setting(
        "RUMMY_RATE_PER_PEER",
        "200/400",
        "Calls per second/burst allowed to one client connection, Login included (0: no limit)",
    ),
    Setting(
        "RUMMY_STREAMS_PER_PLAYER",
        "8",
        "Live streams (Watch, queue and private-table waits) one player may hold (0: no limit)",
    ),
    Setting(
        "RUMMY_STREAMS_PER_REPLICA",
        "10000",
        "Live streams one server process holds, all players together (0: no limit)",
    ),
    Setting("RUMMY_LOG_FORMAT", "auto", "json, console, or auto (console in a terminal)"),
    Setting("RUMMY_LOG_LEVEL", "info", "debug, info, warning or error"),
)
_DEFAULTS = {s.name: s.default for s in SETTINGS}
DATABASE_SCHEMES = ("postgresql", "postgres")
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
"""What asyncpg accepts; anything else it refuses with a traceback at the first connection."""


class Env:
    """Typed reads of the settings above from an environment mapping."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._env = os.environ if environ is None else environ

    def text(self, name: str) -> str:
        return self._env.get(name, _DEFAULTS[name]).strip()

    def integer(self, name: str, *, low: int = 0, high: int = 2**31) -> int:
        raw = self.text(name)
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not a whole number") from None
        if not low <= value <= high:
            raise ConfigError(f"{name}={value} must be between {low} and {high}")
        return value

    def number(self, name: str, *, low: float = 0.0, high: float = 1e9) -> float:
        raw = self.text(name)
        try:
            value = float(raw)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not a number") from None
        if not (math.isfinite(value) and low <= value <= high):
            raise ConfigError(f"{name}={raw} must be between {low:g} and {high:g}")
        return value

    def flag(self, name: str) -> bool:
        raw = self.text(name).lower()
        if raw in ("1", "true", "yes", "on"):
            return True
        if raw in ("0", "false", "no", "off", ""):
            return False
        raise ConfigError(f"{name}={raw!r} must be true or false")

    def rate(self, name: str) -> tuple[float, int]:
        """``rate/burst`` (``50/100``), or a bare rate with a burst of twice it; 0 is off."""
        raw = self.text(name)
        rate_text, sep, burst_text = raw.partition("/")
        try:
            rate = float(rate_text)
            burst = int(burst_text) if sep else max(1, math.ceil(rate * 2))
        except ValueError:
            raise ConfigError(
                f"{name}={raw!r} must look like 50/100 (calls per second/burst)"
            ) from None
        if not (math.isfinite(rate) and 0 <= rate <= 1e6 and 1 <= burst <= 10**7):
            raise ConfigError(f"{name}={raw!r}: rate must be 0 to 1000000, burst 1 to 10000000")
        return rate, burst

    def address(self, name: str) -> str:
        raw = self.text(name)
        host, sep, port = raw.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
            raise ConfigError(f"{name}={raw!r} must look like host:port")
        return raw

    def database_url(self) -> str:
        """DATABASE_URL ('' when unset), checked for the mistakes asyncpg would only
        report as a traceback. The messages never repeat the URL: it holds a password."""
        name = "DATABASE_URL"
        raw = self.text(name)
        if not raw:
            return ""
        try:
            parts = urlsplit(raw)
        except ValueError as error:
            raise ConfigError(f"{name} is not a URL ({error})") from None
        if parts.scheme not in DATABASE_SCHEMES:
            given = f"{parts.scheme}://" if parts.scheme else "no scheme"
            raise ConfigError(
                f"{name} must look like postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
                f" (it starts with {given})"
            )
        for host in parts.netloc.rpartition("@")[2].split(","):
            # A bracketed IPv6 address holds colons of its own.
            port = host.rpartition("]")[2] if host.startswith("[") else host
            port = port.rpartition(":")[2] if ":" in port else ""
            if port and not (port.isdigit() and 0 < int(port) < 65536):
                raise ConfigError(f"{name} has a port that is not a number from 1 to 65535")
        for mode in parse_qs(parts.query).get("sslmode", []):
            if mode not in SSL_MODES:
                raise ConfigError(f"{name}: sslmode must be one of {', '.join(SSL_MODES)}")
        return raw

    def secret(self) -> str:
        value = self.text("RUMMY_TOKEN_SECRET")
        if len(value.encode()) < 32:
            raise ConfigError(
                "RUMMY_TOKEN_SECRET must be set to at least 32 bytes, the same on every replica"
            )
        return value

    def choice(self, name: str, options: tuple[str, ...]) -> str:
        value = self.text(name).lower()
        if value not in options:
            raise ConfigError(f"{name}={value!r} must be one of {', '.join(options)}")
        return value


def settings_table() -> str:
    """The README's configuration table, in Markdown."""
    rows = ["| Variable | Default | Meaning |", "|---|---|---|"]
    rows += [f"| `{s.name}` | `{s.default}` | {s.help} |" for s in SETTINGS]
    return "\n".join(rows)
