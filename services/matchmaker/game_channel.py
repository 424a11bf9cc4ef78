"""The matchmaker's channel to the game service, and how soon it notices that the
game service is back after an outage.

gRPC's own reconnect backoff grows to 120 s between two attempts: after an outage
of a few minutes the channel could stay down for up to two more minutes with the
game service serving again, which is as long as a match waits for its table
before it is given up (`matcher.GIVE_UP_S`): tickets queued in the outage could
end unmatched after it. Here the pauses stop growing at `Reconnect.max_s`.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from services.common import tracing


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


@dataclass(frozen=True, slots=True)
class Reconnect:
    """How the channel connects again once it lost the game service: after a
    failed attempt it waits `first_s`, then each pause 1.6 times the one before
    (gRPC's rule, give or take 20 %), up to `max_s`."""

    first_s: float = 0.5
    max_s: float = 2.0
    """The longest pause between two attempts: the game service back is noticed
    within it (plus 20 %), whatever the outage lasted. An attempt costs a
    connection refused (or a DNS query), per replica and game server address."""
    attempt_s: float = 5.0
    """The least time one attempt is given to connect (gRPC's default, 20 s, would
    keep a channel whose attempt met an address that answers nothing, a game
    server's host gone, from trying again for that long)."""

    def options(self) -> list[tuple[str, int]]:
        return [
            ("grpc.initial_reconnect_backoff_ms", _ms(self.first_s)),
            ("grpc.max_reconnect_backoff_ms", _ms(self.max_s)),
            ("grpc.min_reconnect_backoff_ms", _ms(self.attempt_s)),
            # Game servers started again come back at new addresses: the game
            # Service's name is resolved again as often (gRPC's default: at most
            # every 30 s).
            ("grpc.dns_min_time_between_resolutions_ms", _ms(self.max_s)),
        ]


def open_game_channel(target: str, reconnect: Reconnect) -> grpc.aio.Channel:
    """Round robin over every address the (headless) game Service resolves to; the
    game servers' max connection age makes the channel resolve it again."""
    options: list[tuple[str, int | str]] = [("grpc.lb_policy_name", "round_robin")]
    options += reconnect.options()
    return grpc.aio.insecure_channel(
        target, options=options, interceptors=tracing.client_interceptors()
    )
