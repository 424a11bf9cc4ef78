"""A rules-engine state rebuilt from one seat's `TableView`, so the engine's bots
and hints can run in a client that only sees what its seat may see."""

from __future__ import annotations

from services.common.pb.rummy.v1 import table_pb2
from services.game import options
from services.game.rules import melds as M
from services.game.rules.cards import JOKER, NO_SUIT
from services.game.rules.ruleset import Ruleset, preset
from services.game.rules.state import GameState, Phase, SeatStatus

_PHASE = {
    table_pb2.PHASE_DRAW: Phase.DRAW,
    table_pb2.PHASE_PLAY: Phase.PLAY,
    table_pb2.PHASE_GAME_OVER: Phase.GAME_OVER,
}
_STATUS = {
    table_pb2.SEAT_STATUS_PLAYING: SeatStatus.PLAYING,
    table_pb2.SEAT_STATUS_LEFT: SeatStatus.LEFT,
    table_pb2.SEAT_STATUS_ELIMINATED: SeatStatus.ELIMINATED,
}
UNKNOWN = -1
"""A card this seat cannot see (another hand, the stock)."""


def meld_from_view(view: table_pb2.MeldView, rules: Ruleset) -> M.TableMeld:
    """The engine's meld for a table meld as the server shows it."""
    deck = rules.deck
    ids = tuple(c.id for c in view.cards)
    naturals = [c for c in ids if deck.rank[c] != JOKER]
    if view.kind == table_pb2.MELD_KIND_GROUP:
        named = tuple((j.joker_card_id, j.suit - 1) for j in view.jokers if j.suit)
        return M.TableMeld(
            view.id,
            view.owner_seat,
            M.MeldKind.GROUP,
            ids,
            deck.rank[naturals[0]],
            NO_SUIT,
            named,
        )
    start = M.run_starts(ids, deck)[0]
    return M.TableMeld(view.id, view.owner_seat, M.MeldKind.RUN, ids, start, deck.suit[naturals[0]])


def rules_of(view: table_pb2.TableView) -> Ruleset:
    """The rule set as this table plays it: card ids follow its deck, which grows
    with the number of seats (`contract` at 5 or 6)."""
    return preset(view.ruleset).for_seats(len(view.seats))


def state_from_view(view: table_pb2.TableView) -> GameState:
    rules = rules_of(view)
    seats = len(view.seats)
    me = view.my_seat if view.HasField("my_seat") else -1
    hands = [
        [c.id for c in view.hand] if s == me else [UNKNOWN] * view.seats[s].card_count
        for s in range(seats)
    ]
    taken = view.taken_discard_id if view.HasField("taken_discard_id") else -1
    window = view.claim_window if view.HasField("claim_window") else None
    return GameState(
        ruleset=rules,
        options=options.from_message(view.options),
        seats=seats,
        hands=hands,
        stock=[UNKNOWN] * view.stock_size,
        discard=[c.id for c in view.discard_pile],
        melds=[meld_from_view(m, rules) for m in view.melds],
        opened=[s.has_opened for s in view.seats],
        totals=[s.score_total for s in view.seats],
        status=[_STATUS.get(s.status, SeatStatus.PLAYING) for s in view.seats],
        phase=_PHASE.get(view.phase, Phase.DEAL),
        round_no=view.round,
        dealer=view.dealer_seat,
        current=view.current_seat,
        turn=view.turn,
        taken_discard=taken,
        # The view does not say whether the taken card was used: it was if it left the hand.
        taken_used=taken >= 0 and all(c.id != taken for c in view.hand),
        began_opened=view.seats[view.current_seat].has_opened if view.seats else False,
        claim_card=window.card.id if window is not None else -1,
        claim_deadline_ms=window.closes_at.ToMilliseconds() if window is not None else 0,
        claimants=[me] if window is not None and window.claimed_by_me else [],
        reposed=view.discard_put_back,
        top_discarder=(
            window.discarded_by_seat
            if window is not None and window.HasField("discarded_by_seat")
            else -1
        ),
    )
