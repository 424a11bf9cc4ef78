"""The tickets the phases send: one player's Enqueue and when each of its messages
came, and the mix of queue sizes (2, 3 and 4 players)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(slots=True)
class Ticket:
    player_id: str
    size: int
    sent: float = math.nan
    queued: float = math.nan
    matched: float = math.nan
    table_id: str = ""
    error: str = ""


def split_sizes(total: int) -> dict[int, int]:
    """Tickets per queue size, about a third each, adding up to ``total`` (at least 5)
    with every table fillable."""
    per = total // 3
    counts = {size: per - per % size for size in (2, 3, 4)}
    rest = total - sum(counts.values())
    if rest % 2:
        counts[3] += 3
        rest -= 3
    counts[2] += rest
    return counts


def tickets_for(players: list[str], rng: random.Random) -> list[Ticket]:
    sizes = split_sizes(len(players))
    order = [size for size, n in sizes.items() for _ in range(n)]
    rng.shuffle(order)
    return [Ticket(p, s) for p, s in zip(players, order, strict=True)]
