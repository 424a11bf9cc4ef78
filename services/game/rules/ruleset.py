"""Rule sets as data: one engine, four presets.

A `Ruleset` holds every point where the rule sets of RULES.md differ, so a new
preset is a new value, not a new game loop. Table options that the players
choose per table (timer, turn cap, game length) live in `TableOptions`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from .cards import ACE_HIGH, JOKER, Deck, deck_of

TURN_TIMER_MS = 45_000
"""45 s per turn (seed 000): long enough to think, short enough that a table
never waits minutes on one player."""

TURN_CAP = 120
"""A round stops after 120 turns (seed 000): a safety net for rounds nobody can
finish, e.g. players who hold their cards back; in practice rarely reached."""


class JokerDiscard(Enum):
    LAST_CARD_ONLY = "last_card_only"
    """A joker may only be discarded as the last card, to go out (`cafe`)."""
    ALLOWED = "allowed"


class Scoring(Enum):
    EACH_PAYS = "each_pays"
    """Losers add their hand penalty; the winner scores 0; lowest total wins (`cafe`)."""


@dataclass(frozen=True, slots=True)
class Penalties:
    """Points of a card left in hand at the end of a round."""

    ace: int = 11
    face: int = 10
    joker: int = 25

    def of_rank(self, rank: int) -> int:
        if rank == JOKER:
            return self.joker
        if rank in (1, ACE_HIGH):
            return self.ace
        if rank >= 11:
            return self.face
        return rank


@dataclass(frozen=True, slots=True)
class Ruleset:
    name: str
    decks: int = 2
    jokers: int = 6
    hand_size: int = 13
    min_players: int = 2
    max_players: int = 4
    """`cafe`: 2, 3 or 4 players (seed 000)."""
    # Meld shape.
    min_naturals: int = 2
    naturals_at_least_jokers: bool = True
    max_jokers_per_meld: int | None = None
    group_distinct_suits: bool = True
    max_group_size: int = 4
    max_run_length: int = 13
    # Opening and play.
    opening_threshold: int = 0
    joker_discard: JokerDiscard = JokerDiscard.LAST_CARD_ONLY
    must_discard_to_go_out: bool = True
    """`cafe`: a player never melds the last card; a discard closes every turn."""
    retrieved_joker_must_be_melded: bool = True
    max_reshuffles: int | None = None
    """None: the discard pile is reshuffled into the stock as often as needed."""
    # Scoring.
    penalties: Penalties = field(default_factory=Penalties)
    scoring: Scoring = Scoring.EACH_PAYS
    _deck: Deck = field(init=False, repr=False, compare=False)
    """Looked up once: the engine asks for the deck on every card it checks."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_deck", deck_of(self.decks, self.jokers))

    @property
    def deck(self) -> Deck:
        return self._deck


@dataclass(frozen=True, slots=True)
class TableOptions:
    """What the players of one table choose."""

    turn_timer_ms: int = TURN_TIMER_MS
    turn_cap: int = TURN_CAP
    rounds: int = 1
    """Number of rounds when there is no elimination cap (RULES.md: default 1)."""
    elimination_cap: int = 0
    """0: no cap. Otherwise a player whose total reaches the cap is out, and the
    last player left wins; `rounds` is then ignored."""

    def validate(self) -> None:
        if not 100 <= self.turn_timer_ms <= 3_600_000:
            raise ValueError("turn timer must be between 100 ms and one hour")
        if not 1 <= self.turn_cap <= 10_000:
            raise ValueError("turn cap must be between 1 and 10000")
        if not 1 <= self.rounds <= 100:
            raise ValueError("rounds must be between 1 and 100")
        if self.elimination_cap < 0:
            raise ValueError("elimination cap must be positive or 0 (no cap)")


CAFE = Ruleset(name="cafe")
"""Café Rummy house rules (seed 000): 110 cards, no opening threshold."""

PRESETS: dict[str, Ruleset] = {CAFE.name: CAFE}


def preset(name: str) -> Ruleset:
    """The rule set called ``name``; `KeyError` names the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        known = ", ".join(sorted(PRESETS))
        raise KeyError(f"unknown rule set '{name}' (known: {known})") from None


def with_changes(ruleset: Ruleset, **changes: Any) -> Ruleset:
    """A variant of a preset; used by tests and table options."""
    return replace(ruleset, **changes)
