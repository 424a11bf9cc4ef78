"""The observer: what one seat (or a spectator) may see of a table.

Hidden cards leave the engine only through here and `Event.visible_to`: a
seat sees its own hand, the table melds, the discard pile and how many cards
the others hold; never another hand or the order of the stock.
"""

from __future__ import annotations

from dataclasses import dataclass

from .melds import TableMeld
from .state import GameState, Phase, RoundResult, SeatStatus


@dataclass(frozen=True, slots=True)
class SeatView:
    viewer: int | None
    hand: tuple[int, ...]
    """The viewer's own cards; empty for a spectator."""
    hand_sizes: tuple[int, ...]
    melds: tuple[TableMeld, ...]
    discard: tuple[int, ...]
    """The discard pile, bottom first; every card in it was shown face up."""
    stock_size: int
    phase: Phase
    current: int
    round_no: int
    turn: int
    turn_cap: int
    deadline_ms: int
    dealer: int
    opened: tuple[bool, ...]
    totals: tuple[int, ...]
    status: tuple[SeatStatus, ...]
    taken_discard: int
    """The card the viewer took from the discard pile this turn, or -1."""
    results: tuple[RoundResult, ...]
    winner: int


def view(state: GameState, viewer: int | None) -> SeatView:
    own = viewer is not None and 0 <= viewer < state.seats
    mine = own and viewer == state.current
    return SeatView(
        viewer=viewer,
        hand=tuple(state.hands[viewer]) if own and viewer is not None else (),
        hand_sizes=tuple(len(h) for h in state.hands),
        melds=tuple(state.melds),
        discard=tuple(state.discard),
        stock_size=len(state.stock),
        phase=state.phase,
        current=state.current,
        round_no=state.round_no,
        turn=state.turn,
        turn_cap=state.options.turn_cap,
        deadline_ms=state.deadline_ms,
        dealer=state.dealer,
        opened=tuple(state.opened),
        totals=tuple(state.totals),
        status=tuple(state.status),
        taken_discard=state.taken_discard if mine else -1,
        results=tuple(state.results),
        winner=state.winner,
    )
