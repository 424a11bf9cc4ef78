"""Who sits at a table: set when the table is made, never changed after."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SeatPlayer:
    player_id: str
    display_name: str = ""
    is_bot: bool = False
