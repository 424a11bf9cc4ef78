"""Channels to the servers, and the pause between two tries.

A channel finds a restarted server again within seconds, and pings a quiet
connection while a call is open, so a network that drops it without a word (a
laptop changing Wi-Fi) is noticed and the connection replaced.
"""

from __future__ import annotations

import asyncio
import functools
import random
from importlib import resources

import grpc

CHANNEL_OPTIONS: list[tuple[str, int | str]] = [
    # A restarted server is found again within a couple of seconds, not minutes.
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
]
KEEPALIVE_MS = 20_000
"""While a call is open (the table's stream), a quiet connection is pinged this
often, and dropped if the server has not answered 10 s later: a connection the
network lost without a word (a laptop changing Wi-Fi) is noticed and replaced,
instead of a table that goes silent. Servers take pings every 10 s or more."""
PING_TIMEOUT_MS = 10_000
SERVICE_CONFIG = ("services.common.pb", "service_config.json")
"""proto/service_config.json, as `make proto` copies it into the generated package
(package data: in a wheel too)."""


@functools.cache
def service_config() -> str:
    """The API's service config (JSON): load balancing, and which calls gRPC retries."""
    package, name = SERVICE_CONFIG
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def channel_options(keepalive_ms: int = KEEPALIVE_MS) -> list[tuple[str, int | str]]:
    timeout = min(keepalive_ms, PING_TIMEOUT_MS)
    return [
        *CHANNEL_OPTIONS,
        ("grpc.service_config", service_config()),
        ("grpc.enable_retries", 1),  # the default of grpcio; said, as the config needs it
        ("grpc.keepalive_time_ms", keepalive_ms),
        ("grpc.keepalive_timeout_ms", timeout),
        ("grpc.http2.ping_timeout_ms", timeout),
        ("grpc.http2.max_pings_without_data", 0),  # a quiet stream is pinged on
    ]


def open_channel(
    target: str, *, tls: bool = False, keepalive_ms: int = KEEPALIVE_MS
) -> grpc.aio.Channel:
    """A channel to ``target``: TLS checked against the system's root certificates
    (a server behind a TLS gateway), or plaintext (a server on this machine)."""
    options = channel_options(keepalive_ms)
    if tls:
        credentials = grpc.ssl_channel_credentials()
        return grpc.aio.secure_channel(target, credentials, options=options)
    return grpc.aio.insecure_channel(target, options=options)


class Backoff:
    """Exponential delays with jitter: 0.2 s doubling up to 5 s."""

    def __init__(self, first: float = 0.2, cap: float = 5.0) -> None:
        self.first, self.cap, self.tries = first, cap, 0

    async def wait(self) -> None:
        delay = min(self.cap, self.first * 2**self.tries)
        self.tries += 1
        await asyncio.sleep(delay * random.uniform(0.7, 1.3))

    def reset(self) -> None:
        self.tries = 0
