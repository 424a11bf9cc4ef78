"""Engine values to `rummy.v1` messages, for one viewer at a time: the table view,
and the cards, melds and results that events carry too (`event_wire`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from google.protobuf.timestamp_pb2 import Timestamp

from services.common.pb.rummy.v1 import cards_pb2, table_pb2
from services.common.wire import options
from services.common.wire.bot_levels import level_message

from .records import Committed, SeatPlayer
from .rules import events as ev
from .rules.cards import Deck, rank_name
from .rules.events import HIDDEN
from .rules.fairness import commitment
from .rules.melds import MeldKind, TableMeld, joker_targets
from .rules.ruleset import Contract, Ruleset
from .rules.scoring import hand_penalty
from .rules.state import GameState, Phase, SeatStatus
from .rules.view import view

_PHASES = {
    Phase.DEAL: table_pb2.PHASE_ROUND_OVER,
    Phase.DRAW: table_pb2.PHASE_DRAW,
    Phase.PLAY: table_pb2.PHASE_PLAY,
    Phase.GAME_OVER: table_pb2.PHASE_GAME_OVER,
}
_STATUS = {
    SeatStatus.PLAYING: table_pb2.SEAT_STATUS_PLAYING,
    SeatStatus.LEFT: table_pb2.SEAT_STATUS_LEFT,
    SeatStatus.ELIMINATED: table_pb2.SEAT_STATUS_ELIMINATED,
}
_END = {
    ev.EndReason.WENT_OUT: table_pb2.END_REASON_WENT_OUT,
    ev.EndReason.TURN_CAP: table_pb2.END_REASON_TURN_CAP,
    ev.EndReason.ROUNDS_PLAYED: table_pb2.END_REASON_ROUNDS_PLAYED,
    ev.EndReason.LAST_STANDING: table_pb2.END_REASON_LAST_STANDING,
    ev.EndReason.OTHERS_LEFT: table_pb2.END_REASON_OTHERS_LEFT,
    ev.EndReason.BLOCKED: table_pb2.END_REASON_BLOCKED,
    ev.EndReason.TARGET_REACHED: table_pb2.END_REASON_TARGET_REACHED,
    ev.EndReason.ENDED_BY_OPERATOR: table_pb2.END_REASON_ENDED_BY_OPERATOR,
}
MELD_VIEWS_KEPT = 4096
"""Meld views remembered: a few busy tables' worth of melds on one replica."""
COMMITMENTS_KEPT = 1024
"""Deck commitments remembered: one per deal, shown in every view of that deal."""
_KIND = {MeldKind.GROUP: table_pb2.MELD_KIND_GROUP, MeldKind.RUN: table_pb2.MELD_KIND_RUN}


def timestamp_ms(ms: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp


_CARD_MESSAGES: dict[int, tuple[Deck, list[cards_pb2.Card]]] = {}


def _card_messages(deck: Deck) -> list[cards_pb2.Card]:
    """Every card of ``deck`` as a message, made once per deck: half the cost of a
    view's cards. Callers copy them (a message field or a repeated field assigned
    from one copies it) and never change them."""
    kept = _CARD_MESSAGES.get(id(deck))
    if kept is None or kept[0] is not deck:
        made = [cards_pb2.Card(id=c, code=deck.code(c)) for c in range(deck.size)]
        kept = _CARD_MESSAGES[id(deck)] = (deck, made)
    return kept[1]


def card(deck: Deck, card_id: int) -> cards_pb2.Card | None:
    if card_id == HIDDEN or card_id < 0:
        return None
    return _card_messages(deck)[card_id]


def cards(deck: Deck, ids: tuple[int, ...] | list[int]) -> list[cards_pb2.Card]:
    made = _card_messages(deck)
    return [made[c] for c in ids if c >= 0]


@lru_cache(maxsize=MELD_VIEWS_KEPT)
def meld_view(meld: TableMeld, rules: Ruleset) -> table_pb2.MeldView:
    """A meld as every viewer sees it. Kept: a meld lies on the table, unchanged,
    through every view and event of the round. Callers copy it (a message field
    or a repeated field assigned from it) and never change it."""
    deck = rules.deck
    jokers = []
    for c in meld.cards:
        if deck.is_joker(c):
            targets = joker_targets(meld, c, rules)
            suit = cards_pb2.Suit.ValueType(targets[0][1] + 1 if len(targets) == 1 else 0)
            jokers.append(
                table_pb2.JokerRole(
                    joker_card_id=c,
                    rank=rank_name(meld.rank if meld.kind == MeldKind.GROUP else targets[0][0]),
                    suit=suit,
                )
            )
    return table_pb2.MeldView(
        id=meld.id,
        owner_seat=meld.owner,
        kind=_KIND[meld.kind],
        cards=cards(deck, meld.cards),
        jokers=jokers,
    )


def contract_message(contract: Contract | None) -> table_pb2.Contract | None:
    return options.contract_message(contract) if contract is not None else None


def round_result(
    *,
    round_no: int,
    winner: int,
    reason: ev.EndReason,
    penalties: tuple[int, ...],
    totals: tuple[int, ...],
    doubled: bool,
    hands: tuple[tuple[int, ...], ...],
    rules: Ruleset,
) -> table_pb2.RoundResult:
    """A scored round, with every seat's cards left: the round is over, so they are
    shown to every viewer (empty, and said unknown, for a round kept before they were)."""
    shown = len(hands) == len(penalties)
    return table_pb2.RoundResult(
        round=round_no,
        winner_seat=winner if winner >= 0 else None,
        end_reason=_END[reason],
        scores=[
            table_pb2.SeatScore(
                seat=s,
                points=p,
                total=totals[s],
                cards_left=cards(rules.deck, hands[s]) if shown else [],
                cards_left_points=hand_penalty(hands[s], rules) if shown else 0,
            )
            for s, p in enumerate(penalties)
        ],
        doubled=doubled,
        cards_left_shown=shown,
    )


def table_view(
    committed: Committed, seats: dict[int, SeatPlayer], table_id: str
) -> table_pb2.TableView:
    state: GameState = committed.state
    rules = state.ruleset
    deck = rules.deck
    seen = view(state, committed.seat)
    message = table_pb2.TableView(
        table_id=table_id,
        version=committed.version,
        ruleset=rules.name,
        options=options.to_message(state.options, rules),
        seats=[
            table_pb2.SeatView(
                seat=s,
                player_id=seats[s].player_id if s in seats else "",
                display_name=seats[s].display_name if s in seats else "",
                is_bot=seats[s].is_bot if s in seats else False,
                bot_level=level_message(seats[s].bot_level if s in seats else None),
                card_count=seen.hand_sizes[s],
                score_total=seen.totals[s],
                has_opened=seen.opened[s],
                status=_STATUS[seen.status[s]],
                connected=s in committed.connected or (s in seats and seats[s].is_bot),
            )
            for s in range(state.seats)
        ],
        hand=cards(deck, seen.hand),
        melds=[meld_view(m, rules) for m in seen.melds],
        discard_size=len(seen.discard),
        discard_pile=cards(deck, seen.discard),
        stock_size=seen.stock_size,
        current_seat=seen.current,
        phase=_PHASES[seen.phase],
        round=seen.round_no,
        turn=seen.turn,
        turn_cap=seen.turn_cap,
        server_time=timestamp_ms(committed.now_ms),
        last_seq=committed.last_seq,
        rules=rule_info(state),
        round_results=[
            round_result(
                round_no=r.round_no,
                winner=r.winner,
                reason=ev.EndReason(r.reason),
                penalties=r.penalties,
                totals=r.totals,
                doubled=r.doubled,
                hands=r.hands,
                rules=rules,
            )
            for r in seen.results
        ],
        dealer_seat=seen.dealer,
    )
    if committed.seat is not None:
        message.my_seat = committed.seat
    if seen.discard:
        message.discard_top.CopyFrom(cards(deck, [seen.discard[-1]])[0])
    if seen.deadline_ms and seen.phase in (Phase.DRAW, Phase.PLAY):
        message.turn_deadline.CopyFrom(timestamp_ms(seen.deadline_ms))
    if seen.taken_discard >= 0:
        message.taken_discard_id = seen.taken_discard
    message.discard_put_back = state.reposed and state.phase == Phase.DRAW
    if state.deal_order:
        message.deck_commitment = _commitment(state.deal_order, state.seed, state.deal_salt)
    if state.phase == Phase.GAME_OVER:
        reason = ev.EndReason(state.end_reason) if state.end_reason else None
        message.result.CopyFrom(game_ended(state.winner, reason, state.totals, state.end_note))
    if state.claim_card >= 0 and seen.phase in (Phase.DRAW, Phase.PLAY):
        message.claim_window.CopyFrom(
            table_pb2.ClaimWindow(
                card=card(deck, state.claim_card),
                closes_at=timestamp_ms(state.claim_deadline_ms),
                claimed_by_me=committed.seat in state.claimants,
                discarded_by_seat=state.top_discarder if state.top_discarder >= 0 else None,
            )
        )
    return message


@lru_cache(maxsize=COMMITMENTS_KEPT)
def _commitment(order: tuple[int, ...], seed: int, salt_hex: str) -> str:
    """The deal's commitment, hashed once per deal rather than once per view."""
    return commitment(order, seed, bytes.fromhex(salt_hex))


def rule_info(state: GameState) -> table_pb2.RuleInfo:
    """What the table view says of the rules in force: threshold, contract, reshuffles."""
    rules = state.ruleset
    info = table_pb2.RuleInfo(
        opening_threshold=state.options.opening_threshold,
        contract_due=contract_message(state.contract()),
    )
    if rules.max_reshuffles is not None:
        info.reshuffles_left = max(0, rules.max_reshuffles - state.reshuffles)
    return info


def end_reason(reason: ev.EndReason | None) -> table_pb2.EndReason.ValueType:
    """Why a round or a game ended, on the wire (``reason`` None: not known)."""
    return _END[reason] if reason is not None else table_pb2.END_REASON_UNSPECIFIED


def game_ended(
    winner: int, reason: ev.EndReason | None, totals: Sequence[int], note: str = ""
) -> table_pb2.GameEnded:
    """The game's result (``reason`` None: not known, for a game ended long ago)."""
    return table_pb2.GameEnded(
        winner_seat=winner if winner >= 0 else None,
        reason=_END[reason] if reason is not None else table_pb2.END_REASON_UNSPECIFIED,
        totals=[table_pb2.SeatScore(seat=s, points=t, total=t) for s, t in enumerate(totals)],
        note=note,
    )
