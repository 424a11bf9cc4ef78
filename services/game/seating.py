"""Who sits at a table: set when the table is made, never changed after."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .rules.levels import BotLevel


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    player_id: str
    display_name: str = ""
    is_bot: bool = False
    bot_level: BotLevel | None = None
    """A bot seat's level (the table's: every bot at a table plays at one level)."""


def bot_level(seats: Iterable[SeatPlayer]) -> BotLevel:
    """The level the table's bots play at (strong, as every bot did before levels,
    where none is known)."""
    return next((p.bot_level for p in seats if p.bot_level is not None), BotLevel.STRONG)
