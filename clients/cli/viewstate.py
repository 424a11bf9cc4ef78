"""One seat's `TableView` read into the engine's terms (`SeenTable`), so the
engine's bots and hints can run in a client that only sees what its seat may
see: the engine builds the state from it (`seen_state`)."""

from __future__ import annotations

from services.common.pb.rummy.v1 import table_pb2
from services.common.wire import options
from services.game.rules import (
    GameState,
    MeldKind,
    Phase,
    Ruleset,
    SeatStatus,
    SeenTable,
    TableMeld,
    preset,
    seen_state,
    table_meld,
)

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


def meld_from_view(view: table_pb2.MeldView, rules: Ruleset) -> TableMeld:
    """The engine's meld for a table meld as the server shows it."""
    if view.kind == table_pb2.MELD_KIND_GROUP:
        named = tuple((j.joker_card_id, j.suit - 1) for j in view.jokers if j.suit)
        kind = MeldKind.GROUP
    else:
        named, kind = (), MeldKind.RUN
    return table_meld(
        meld_id=view.id,
        owner=view.owner_seat,
        kind=kind,
        cards=tuple(c.id for c in view.cards),
        joker_suits=named,
        rules=rules,
    )


def rules_of(view: table_pb2.TableView) -> Ruleset:
    """The rule set as this table plays it: card ids follow its deck, which grows
    with the number of seats (`contract` at 5 or 6)."""
    return preset(view.ruleset).for_seats(len(view.seats))


def seen_of(view: table_pb2.TableView) -> SeenTable:
    """What this seat sees of the table, in the engine's values."""
    rules = rules_of(view)
    window = view.claim_window if view.HasField("claim_window") else None
    return SeenTable(
        ruleset=rules,
        options=options.from_message(view.options),
        seat=view.my_seat if view.HasField("my_seat") else -1,
        hand=tuple(c.id for c in view.hand),
        hand_sizes=tuple(s.card_count for s in view.seats),
        stock_size=view.stock_size,
        discard=tuple(c.id for c in view.discard_pile),
        melds=tuple(meld_from_view(m, rules) for m in view.melds),
        opened=tuple(s.has_opened for s in view.seats),
        totals=tuple(s.score_total for s in view.seats),
        status=tuple(_STATUS.get(s.status, SeatStatus.PLAYING) for s in view.seats),
        phase=_PHASE.get(view.phase, Phase.DEAL),
        round_no=view.round,
        dealer=view.dealer_seat,
        current=view.current_seat,
        turn=view.turn,
        taken_discard=view.taken_discard_id if view.HasField("taken_discard_id") else -1,
        reposed=view.discard_put_back,
        claim_card=window.card.id if window is not None else -1,
        claim_deadline_ms=window.closes_at.ToMilliseconds() if window is not None else 0,
        claimed=window is not None and window.claimed_by_me,
        top_discarder=(
            window.discarded_by_seat
            if window is not None and window.HasField("discarded_by_seat")
            else -1
        ),
    )


def state_from_view(view: table_pb2.TableView) -> GameState:
    """The engine's state as this seat can know it (see `seen_state`)."""
    return seen_state(seen_of(view))
