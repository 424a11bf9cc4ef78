"""A table as one seat sees it, read back into the engine.

`view` is the observer: what a seat may see of a state. A client gets that view
over the wire and nothing more, yet wants to ask the engine its own questions
(the moves open now, a bot's move, why a laying would be refused), so that it
offers what the server would accept. `seen_state` answers with a state built
from a `SeenTable`: the cards the seat cannot see (other hands, the stock) are
`UNKNOWN`, and what a view leaves out is read from what it shows. Only the
engine fills a `GameState`: a client names what it sees, never the state's
own book-keeping.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cards import JOKER, NO_SUIT
from .melds import MeldKind, TableMeld, run_starts
from .ruleset import Ruleset, TableOptions
from .state import GameState, Phase, SeatStatus

UNKNOWN = -1
"""A card this seat cannot see (another hand, the stock)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SeenTable:
    """What one seat sees of a table, in the engine's values."""

    ruleset: Ruleset
    """As the table plays it (`Ruleset.for_seats`): card ids follow its deck."""
    options: TableOptions
    seat: int
    """The seat that sees the table; -1 for a spectator."""
    hand: tuple[int, ...]
    """The seat's own cards; empty for a spectator."""
    hand_sizes: tuple[int, ...]
    stock_size: int
    discard: tuple[int, ...]
    """The discard pile, bottom first."""
    melds: tuple[TableMeld, ...]
    opened: tuple[bool, ...]
    totals: tuple[int, ...]
    status: tuple[SeatStatus, ...]
    phase: Phase
    round_no: int
    dealer: int
    current: int
    turn: int
    taken_discard: int = -1
    """The card the seat took from the discard pile this turn, or -1."""
    reposed: bool = False
    """The current seat put the taken discard back this turn (`rami51`)."""
    claim_card: int = -1
    """`contract`: the discard on offer to claim, or -1 when no window is open."""
    claim_deadline_ms: int = 0
    claimed: bool = False
    """The seat has claimed the discard on offer."""
    top_discarder: int = -1
    """The seat that discarded the card on offer, or -1."""


def table_meld(
    *,
    meld_id: int,
    owner: int,
    kind: MeldKind,
    cards: tuple[int, ...],
    joker_suits: tuple[tuple[int, int], ...] = (),
    rules: Ruleset,
) -> TableMeld:
    """The table meld these cards make as a view shows it (a run's cards low to
    high): its rank and suit read from its natural cards. ``joker_suits``: a
    group's jokers whose suit the player named."""
    deck = rules.deck
    naturals = [c for c in cards if deck.rank[c] != JOKER]
    if kind == MeldKind.GROUP:
        return TableMeld(meld_id, owner, kind, cards, deck.rank[naturals[0]], NO_SUIT, joker_suits)
    start = run_starts(cards, deck)[0]
    return TableMeld(meld_id, owner, kind, cards, start, deck.suit[naturals[0]])


def seen_state(seen: SeenTable) -> GameState:
    """The state as ``seen.seat`` can know it: ask the engine's questions of it
    (`legal_actions`, `move_kinds`, a bot's move, `laying_refusal`), never
    `apply` a move to it."""
    seats = len(seen.hand_sizes)
    hands = [
        list(seen.hand) if s == seen.seat else [UNKNOWN] * seen.hand_sizes[s] for s in range(seats)
    ]
    taken = seen.taken_discard
    return GameState(
        ruleset=seen.ruleset,
        options=seen.options,
        seats=seats,
        hands=hands,
        stock=[UNKNOWN] * seen.stock_size,
        discard=list(seen.discard),
        melds=list(seen.melds),
        opened=list(seen.opened),
        totals=list(seen.totals),
        status=list(seen.status),
        phase=seen.phase,
        round_no=seen.round_no,
        dealer=seen.dealer,
        current=seen.current,
        turn=seen.turn,
        taken_discard=taken,
        # A view does not say whether the taken card was used: it was if it left the hand.
        taken_used=taken >= 0 and taken not in seen.hand,
        began_opened=seen.opened[seen.current] if seen.opened else False,
        claim_card=seen.claim_card,
        claim_deadline_ms=seen.claim_deadline_ms,
        claimants=[seen.seat] if seen.claimed else [],
        reposed=seen.reposed,
        top_discarder=seen.top_discarder,
    )
