"""Rule sets as data: one engine, four presets.

A `Ruleset` holds every point where the rule sets of RULES.md differ, so a new
preset is a new value, not a new game loop. Table options that the players
choose per table (timer, turn cap, game length) live in `TableOptions`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from functools import cache
from typing import Any

from .cards import ACE_HIGH, JOKER, Deck, deck_of

TURN_TIMER_MS = 45_000
"""45 s per turn (seed 000): long enough to think, short enough that a table
never waits minutes on one player."""

TURN_CAP = 120
"""A round stops after 120 turns (seed 000): a safety net for rounds nobody can
finish, e.g. players who hold their cards back; in practice rarely reached."""

QUICK_MATCH_SIZES = (2, 3, 4)
"""Quick-match queues seat 2, 3 or 4 players in every rule set. Larger tables,
where a rule set allows them (`classic`, `contract`: 5 or 6), are private: six
strangers are long to gather, friends arrive together."""

LARGE_TABLE = 5
"""From this many seats a rule set with a `large_deck` plays with it."""

CLAIM_WINDOW_MS = 3_000
"""`contract`'s claim window unless the table chose another (RULES.md: 3 s)."""

# Games that end: no table option may make a game a real table would never see
# finish. Each bound is the longest game such a table plays, and a table asking
# for more is refused (OPTIONS_INVALID) with the bound in the sentence.

MAX_ROUNDS = 20
"""At most 20 rounds in a game played to a number of rounds: a long evening at a
real table (a `cafe` round takes 5 to 10 minutes, so 2 to 3 hours), and more
than `contract`'s longest list of deals (`MAX_CONTRACT_DEALS`)."""

MAX_ELIMINATION_CAP = 500
"""An elimination cap of at most 500 points: seed 000's own example (« un plafond
de points, par exemple 500 »), five times `classic`'s 100. Every player but a
round's winner adds at least 2 points a round (a card left in hand), so a cap
bounds the game; how long it lasts grows with the cap: two greedy bots reach 500
in 60 to 130 `cafe` rounds, 1000 in 130 to 220. With 4 billion a `cafe` game
played 26 rounds in 30 s with no end in sight."""

MAX_CONTRACT_DEALS = 12
"""A `contract` table's own list of contracts has at most 12 deals: seed 004
plays 7, and a list of its own (« une liste différente ») is not much longer."""

MAX_TARGET_SCORE = 1_000
"""`rami51` played "to" a score: at most 1000 points, five times seed 001's
« En 200 », the only target it names."""


class JokerDiscard(Enum):
    LAST_CARD_ONLY = "last_card_only"
    """A joker may only be discarded as the last card, to go out: `cafe`'s house
    rule (seed 000), which `rami51` follows where its seed is silent."""
    ALLOWED = "allowed"
    """A joker is discarded like any other card (`classic`; `contract`, whose seed
    sets no limit and scores a joker « à celui qui ne s'en débarrasse pas »)."""


class Scoring(Enum):
    EACH_PAYS = "each_pays"
    """Losers add their hand penalty; the winner scores 0; lowest total wins (`cafe`,
    `contract`)."""
    WINNER_COLLECTS = "winner_collects"
    """The winner scores the others' penalties, doubled for a rami d'un coup; a
    blocked deal pays the differences; highest total wins (`rami51`)."""
    CLASSIC = "classic"
    """Losers add their hands (doubled with a joker), the winner -10; a rami sec
    doubles everything (`classic`)."""


class TakenDiscard(Enum):
    """What a player must do with the card taken from the discard pile."""

    KEEP = "keep"
    """Nothing: it may stay in hand (`cafe`)."""
    USE_IN_OPENING = "use_in_opening"
    """Before opening, it must go into the opening made this turn (`rami51`)."""
    USE_THIS_TURN = "use_this_turn"
    """It must go into a meld or a lay-off this turn (`classic`)."""


class Reshuffle(Enum):
    KEEP_TOP = "keep_top"
    """The discard pile but its top card becomes the stock (`cafe`, `rami51`)."""
    ALL = "all"
    """The whole discard pile becomes the stock (`classic`, `contract`)."""


@dataclass(frozen=True, slots=True)
class Contract:
    """What a `contract` deal asks to lay in one action."""

    groups: int
    runs: int
    no_final_discard: bool = False
    """Deal 7: go out by laying every card, no discard."""

    def describe(self) -> str:
        parts = []
        if self.groups:
            parts.append(f"{self.groups} group{'s' if self.groups > 1 else ''} of 3")
        if self.runs:
            parts.append(f"{self.runs} run{'s' if self.runs > 1 else ''} of 4")
        text = " and ".join(parts)
        return text + (", no final discard" if self.no_final_discard else "")


CONTRACTS = (
    Contract(2, 0),
    Contract(1, 1),
    Contract(0, 2),
    Contract(3, 0),
    Contract(2, 1),
    Contract(1, 2),
    Contract(0, 3, no_final_discard=True),
)
"""Seed 004's seven deals."""

CONTRACT_GROUP = 3
CONTRACT_RUN = 4


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
    deal_sizes: tuple[int, ...] = ()
    """Cards dealt in deal 1, 2, ... when they vary (`contract`); else `hand_size`."""
    min_players: int = 2
    max_players: int = 4
    """`cafe`: 2, 3 or 4 players (seed 000). `classic` and `contract`: up to 6, at
    private tables (`QUICK_MATCH_SIZES`)."""
    large_deck: tuple[int, int] | None = None
    """(decks, jokers) from `LARGE_TABLE` seats on, when the deck grows with the
    table (`contract`: « un jeu et un joker de plus au-delà de quatre joueurs »)."""
    # Meld shape.
    min_naturals: int = 2
    naturals_at_least_jokers: bool = True
    max_jokers_per_meld: int | None = None
    group_distinct_suits: bool = True
    max_group_size: int = 4
    max_run_length: int = 13
    # Opening and play.
    opening_threshold: int = 0
    opening_choices: tuple[int, ...] = ()
    """Thresholds a table may choose (`rami51`: 30, 40, 51)."""
    opening_exempt_left: int = -1
    """An opening that leaves this many cards or fewer needs no threshold (-1: none)."""
    taken_discard: TakenDiscard = TakenDiscard.KEEP
    reposer: bool = False
    """A player may put back the discard they took, before any other move (`rami51`)."""
    group_swap_completes: bool = False
    """`classic`: a joker leaves a brelan only when both missing cards complete it."""
    swap_needs_opening: bool = True
    """A joker is taken back only by a seat that has opened. `classic`: by any seat
    at its turn (seed 002: « tout joueur peut à son tour s'emparer » of it), opened
    or not; only lay-offs need a first meld there."""
    announce_last_card: bool = False
    """`classic`: "Carte !" when a player is down to one card."""
    contracts: tuple[Contract, ...] = ()
    claims: bool = False
    """`contract`: other seats may claim the discard ("Puis-je ?") after a stock draw."""
    joker_discard: JokerDiscard = JokerDiscard.LAST_CARD_ONLY
    must_discard_to_go_out: bool = True
    """`cafe`: a player never melds the last card; a discard closes every turn."""
    retrieved_joker_must_be_melded: bool = True
    max_reshuffles: int | None = None
    """None: the discard pile is reshuffled into the stock as often as needed."""
    reshuffle: Reshuffle = Reshuffle.KEEP_TOP
    blocked_deal: bool = False
    """`rami51`: a stock that cannot be rebuilt ends the deal as blocked."""
    # Scoring.
    penalties: Penalties = field(default_factory=Penalties)
    scoring: Scoring = Scoring.EACH_PAYS
    cap_has_winner: bool = True
    """`contract`: at the turn cap nobody went out and everybody pays."""
    default_elimination_cap: int = 0
    _deck: Deck = field(init=False, repr=False, compare=False)
    """Looked up once: the engine asks for the deck on every card it checks."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_deck", deck_of(self.decks, self.jokers))

    @property
    def deck(self) -> Deck:
        return self._deck

    def for_seats(self, seats: int) -> Ruleset:
        """The rule set as a table of ``seats`` plays it: its own, or with the
        `large_deck` from `LARGE_TABLE` seats on. Card ids depend on the deck, so
        whoever reads a table's cards asks for the rule set by its seats."""
        if self.large_deck in (None, (self.decks, self.jokers)) or seats < LARGE_TABLE:
            return self
        return _with_large_deck(self)

    def cards_dealt(self, round_no: int) -> int:
        if self.deal_sizes:
            return self.deal_sizes[(round_no - 1) % len(self.deal_sizes)]
        return self.hand_size

    def contract(self, round_no: int) -> Contract | None:
        if not self.contracts:
            return None
        return self.contracts[(round_no - 1) % len(self.contracts)]


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
    opening_threshold: int = 0
    """0: the rule set's own threshold."""
    target_score: int = 0
    """`rami51` "to 200": deals go on until a deal's winner reaches this total."""
    buy_backs: int = 0
    """`classic`: times an eliminated player re-enters (at most 3)."""
    claim_window_ms: int = CLAIM_WINDOW_MS
    """`contract`: how long the others may claim the discard after a stock draw."""
    contracts: tuple[Contract, ...] = ()
    """`contract`: the table's own list ("les joueurs peuvent convenir d'une liste
    différente"); empty: the rule set's seven contracts."""

    def validate(self) -> None:
        if not 100 <= self.turn_timer_ms <= 3_600_000:
            raise ValueError("turn timer must be between 100 ms and one hour")
        if not 1 <= self.turn_cap <= 10_000:
            raise ValueError("turn cap must be between 1 and 10000")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds must be between 1 and {MAX_ROUNDS}")
        if not 0 <= self.elimination_cap <= MAX_ELIMINATION_CAP:
            raise ValueError(
                f"the elimination cap must be between 1 and {MAX_ELIMINATION_CAP} points"
                " (0: the rule set's default)"
            )
        if self.target_score > MAX_TARGET_SCORE:
            raise ValueError(f"a target score is at most {MAX_TARGET_SCORE} points")
        if not 0 <= self.buy_backs <= 3:
            raise ValueError("buy-backs must be between 0 and 3")
        if self.target_score < 0 or self.opening_threshold < 0:
            raise ValueError("scores and thresholds are never negative")
        if not 500 <= self.claim_window_ms <= 60_000:
            raise ValueError("the claim window must be between 500 ms and 60 s")
        if len(self.contracts) > MAX_CONTRACT_DEALS:
            raise ValueError(f"a contract list has at most {MAX_CONTRACT_DEALS} deals")
        for c in self.contracts:
            if c.groups < 0 or c.runs < 0 or not 1 <= c.groups + c.runs <= 4:
                raise ValueError("a contract asks for 1 to 4 melds")


@cache
def _with_large_deck(ruleset: Ruleset) -> Ruleset:
    """One value per rule set, so that tables of the same size share it (and the
    caches keyed by rule set hold one entry)."""
    assert ruleset.large_deck is not None
    decks, jokers = ruleset.large_deck
    return replace(ruleset, decks=decks, jokers=jokers)


CAFE = Ruleset(name="cafe")
"""Café Rummy house rules (seed 000): 110 cards, no opening threshold."""

RAMI51 = Ruleset(
    name="rami51",
    jokers=4,
    naturals_at_least_jokers=False,
    opening_threshold=40,
    opening_choices=(30, 40, 51),
    opening_exempt_left=1,
    taken_discard=TakenDiscard.USE_IN_OPENING,
    reposer=True,
    must_discard_to_go_out=False,
    max_reshuffles=2,
    blocked_deal=True,
    penalties=Penalties(joker=20),
    scoring=Scoring.WINNER_COLLECTS,
)
"""Rami with an opening threshold (seed 001): 108 cards, the winner collects."""

CLASSIC = Ruleset(
    name="classic",
    jokers=4,
    hand_size=14,
    max_players=6,
    max_jokers_per_meld=1,
    opening_threshold=51,
    taken_discard=TakenDiscard.USE_THIS_TURN,
    group_swap_completes=True,
    swap_needs_opening=False,
    retrieved_joker_must_be_melded=False,
    announce_last_card=True,
    joker_discard=JokerDiscard.ALLOWED,
    must_discard_to_go_out=False,
    reshuffle=Reshuffle.ALL,
    penalties=Penalties(joker=20),
    scoring=Scoring.CLASSIC,
    default_elimination_cap=100,
)
"""Traditional French rami (seed 002): 14 dealt, 51 to open, elimination at 100;
« de 2 à 6 joueurs », all with the 108 cards."""

CONTRACT = Ruleset(
    name="contract",
    jokers=1,
    hand_size=10,
    deal_sizes=(10, 10, 10, 12, 12, 12, 12),
    max_players=6,
    large_deck=(3, 2),
    group_distinct_suits=False,
    contracts=CONTRACTS,
    claims=True,
    joker_discard=JokerDiscard.ALLOWED,
    reshuffle=Reshuffle.ALL,
    penalties=Penalties(ace=15, joker=15),
    cap_has_winner=False,
)
"""Rami contrat, Liverpool (seed 004): seven deals with imposed contracts; 105
cards, 158 (three packs, two jokers) at 5 or 6 seats (« de quatre à six »)."""

PRESETS: dict[str, Ruleset] = {r.name: r for r in (CAFE, RAMI51, CLASSIC, CONTRACT)}


def _ends_by(ruleset: Ruleset, options: TableOptions, deals: int) -> str:
    """How a game whose length is not a number of rounds ends, in words."""
    name, cap = ruleset.name, options.elimination_cap or ruleset.default_elimination_cap
    if ruleset.contracts:
        return f"{name} is played over its {deals} deals"
    if options.target_score:
        return f"{name} to {options.target_score} is played until a deal's winner reaches it"
    if options.elimination_cap:
        return f"{name} with an elimination cap is played until players reach {cap}"
    return f"{name} is played until players reach the elimination cap ({cap})"


def effective_options(ruleset: Ruleset, options: TableOptions) -> TableOptions:
    """The table's options with the rule set's defaults filled in, checked."""
    threshold = options.opening_threshold or ruleset.opening_threshold
    if (
        options.opening_threshold
        and ruleset.opening_choices
        and (threshold not in ruleset.opening_choices)
    ):
        choices = ", ".join(str(c) for c in ruleset.opening_choices)
        raise ValueError(f"the opening threshold of {ruleset.name} is one of {choices}")
    if options.opening_threshold not in (0, ruleset.opening_threshold) and (
        not ruleset.opening_choices
    ):
        raise ValueError(f"{ruleset.name} has no opening threshold to choose")
    if options.target_score and ruleset.scoring is not Scoring.WINNER_COLLECTS:
        raise ValueError(f"{ruleset.name} is not played to a target score")
    if options.buy_backs and ruleset.scoring is not Scoring.CLASSIC:
        raise ValueError(f"{ruleset.name} has no buy-backs")
    if options.contracts and not ruleset.contracts:
        raise ValueError(f"{ruleset.name} has no contracts")
    if options.claim_window_ms != CLAIM_WINDOW_MS and not ruleset.claims:
        raise ValueError(f"{ruleset.name} has no claim window (only contract has)")
    if options.elimination_cap and (
        ruleset.scoring is Scoring.WINNER_COLLECTS or ruleset.contracts
    ):
        # rami51: the winner collects, so a cap would put the leader out;
        # contract: the game is its seven deals.
        raise ValueError(f"{ruleset.name} is not played to an elimination cap")
    deals = len(options.contracts or ruleset.contracts)
    if options.rounds not in (1, deals) and (
        ruleset.contracts
        or options.target_score
        or options.elimination_cap
        or ruleset.default_elimination_cap
    ):
        # Ignored there: refused, so that nobody believes it counts (and players
        # queueing for the same game are not told apart by it).
        raise ValueError(f"{_ends_by(ruleset, options, deals)}, not for a number of rounds")
    effective = replace(
        options,
        opening_threshold=threshold,
        elimination_cap=options.elimination_cap or ruleset.default_elimination_cap,
        rounds=deals if ruleset.contracts else options.rounds,
    )
    effective.validate()
    return effective


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
