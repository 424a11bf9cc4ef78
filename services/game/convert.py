"""Engine values to `rummy.v1` messages, for one viewer at a time."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from services.common.pb.rummy.v1 import cards_pb2, table_pb2

from . import options
from .bot_levels import level_message
from .records import Committed, SeatPlayer
from .rules import events as ev
from .rules.cards import Deck, rank_name
from .rules.events import HIDDEN
from .rules.fairness import commitment
from .rules.melds import Meld, MeldKind, joker_targets
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
}
MELD_VIEWS_KEPT = 4096
"""Meld views remembered: a few busy tables' worth of melds on one replica."""
COMMITMENTS_KEPT = 1024
"""Deck commitments remembered: one per deal, shown in every view of that deal."""
_PASSED = {
    "left": table_pb2.TURN_PASSED_REASON_LEFT,
    "no_move": table_pb2.TURN_PASSED_REASON_NO_MOVE,
}
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
def meld_view(meld: Meld, rules: Ruleset) -> table_pb2.MeldView:
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


def _contract_of(contracts: tuple[Contract, ...], round_no: int) -> Contract | None:
    """Deal ``round_no``'s contract: the list repeats (as `GameState.contract`)."""
    return contracts[(max(round_no, 1) - 1) % len(contracts)] if contracts else None


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
        message.result.CopyFrom(game_ended(state.winner, reason, state.totals))
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


def table_event(
    seq: int,
    version: int,
    at: datetime,
    event: ev.Event,
    viewer: int | None,
    rules: Ruleset,
    contracts: tuple[Contract, ...] = (),
) -> table_pb2.TableEvent:
    """One logged event as ``viewer`` may see it. ``contracts``: the table's own
    list of contracts, when its options chose one (else the rule set's)."""
    seen = event.visible_to(viewer)
    deck = rules.deck
    out = table_pb2.TableEvent(seq=seq, version=version)
    out.occurred_at.FromDatetime(at)
    match seen:
        case ev.RoundDealt():
            hand = seen.hands[viewer] if viewer is not None and viewer < len(seen.hands) else ()
            out.kind = table_pb2.EVENT_KIND_DEALT
            out.dealt.CopyFrom(
                table_pb2.Dealt(
                    round=seen.round_no,
                    dealer_seat=seen.dealer,
                    hand=cards(deck, hand),
                    hand_sizes=[len(h) for h in seen.hands],
                    discard_top=card(deck, seen.discard_top),
                    stock_size=seen.stock_size,
                    contract_due=contract_message(
                        _contract_of(contracts or rules.contracts, seen.round_no)
                    ),
                    deck_commitment=seen.commitment,
                )
            )
        case ev.TurnBegan():
            out.kind = table_pb2.EVENT_KIND_TURN_STARTED
            out.seat = seen.seat
            out.turn_started.CopyFrom(
                table_pb2.TurnStarted(turn=seen.turn, deadline=timestamp_ms(seen.deadline_ms))
            )
        case ev.TurnResumed():
            out.kind = table_pb2.EVENT_KIND_TURN_RESUMED
            out.seat = seen.seat
            out.turn_resumed.CopyFrom(
                table_pb2.TurnResumed(
                    turn=seen.turn,
                    deadline=timestamp_ms(seen.deadline_ms),
                    claim_deadline=(
                        timestamp_ms(seen.claim_deadline_ms) if seen.claim_deadline_ms else None
                    ),
                    stopped_for=Duration(
                        seconds=seen.stopped_ms // 1000, nanos=seen.stopped_ms % 1000 * 1_000_000
                    ),
                )
            )
        case ev.Drew(from_discard=True):
            out.kind = table_pb2.EVENT_KIND_TOOK_DISCARD
            out.seat = seen.seat
            out.took_discard.CopyFrom(table_pb2.TookDiscard(card=card(deck, seen.card)))
        case ev.Drew():
            out.kind = table_pb2.EVENT_KIND_DREW
            out.seat = seen.seat
            out.drew.CopyFrom(
                table_pb2.Drew(card=card(deck, seen.card), stock_size=seen.stock_size)
            )
        case ev.Reshuffled():
            out.kind = table_pb2.EVENT_KIND_RESHUFFLED
            top = card(deck, seen.discard_top)
            out.reshuffled.CopyFrom(
                table_pb2.Reshuffled(stock_size=seen.stock_size, discard_top=top, count=seen.count)
            )
        case ev.Melded():
            out.kind = table_pb2.EVENT_KIND_MELDED
            out.seat = seen.seat
            out.melded.CopyFrom(table_pb2.Melded(melds=[meld_view(m, rules) for m in seen.melds]))
            out.melded.opened, out.melded.opening_points = seen.opened, seen.opening_points
        case ev.LaidOff():
            out.kind = table_pb2.EVENT_KIND_LAID_OFF
            out.seat = seen.seat
            out.laid_off.CopyFrom(
                table_pb2.LaidOff(cards=cards(deck, seen.cards), meld=meld_view(seen.meld, rules))
            )
        case ev.JokerSwapped():
            out.kind = table_pb2.EVENT_KIND_JOKER_SWAPPED
            out.seat = seen.seat
            out.joker_swapped.CopyFrom(
                table_pb2.JokerSwapped(
                    joker=card(deck, seen.joker),
                    replacements=cards(deck, [seen.replacement, seen.second]),
                    meld=meld_view(seen.meld, rules),
                    # On the table, so every viewer sees where the joker went.
                    placed_in=meld_view(seen.placed_in, rules) if seen.placed_in else None,
                )
            )
        case ev.Discarded():
            out.kind = table_pb2.EVENT_KIND_DISCARDED
            out.seat = seen.seat
            out.discarded.CopyFrom(
                table_pb2.Discarded(card=card(deck, seen.card), automatic=seen.automatic)
            )
        case ev.TurnPassed():
            out.kind = table_pb2.EVENT_KIND_TURN_PASSED
            out.seat = seen.seat
            reason = _PASSED.get(seen.reason, table_pb2.TURN_PASSED_REASON_TIMED_OUT)
            out.turn_passed.CopyFrom(table_pb2.TurnPassed(reason=reason))
        case ev.PlayerLeft():
            out.kind = table_pb2.EVENT_KIND_PLAYER_LEFT
            out.seat = seen.seat
            out.player_left.CopyFrom(table_pb2.PlayerLeft())
        case ev.PlayerConnection():
            out.kind = table_pb2.EVENT_KIND_PLAYER_CONNECTION
            out.seat = seen.seat
            out.player_connection.CopyFrom(table_pb2.PlayerConnection(connected=seen.connected))
        case ev.PlayerEliminated():
            out.kind = table_pb2.EVENT_KIND_PLAYER_ELIMINATED
            out.seat = seen.seat
            out.player_eliminated.CopyFrom(table_pb2.PlayerEliminated(total=seen.total))
        case ev.BoughtBack():
            out.kind = table_pb2.EVENT_KIND_BOUGHT_BACK
            out.seat = seen.seat
            out.bought_back.CopyFrom(table_pb2.BoughtBack(total=seen.total, used=seen.used))
        case ev.RoundEnded():
            out.kind = table_pb2.EVENT_KIND_ROUND_ENDED
            out.round_ended.CopyFrom(
                table_pb2.RoundEnded(
                    result=round_result(
                        round_no=seen.round_no,
                        winner=seen.winner,
                        reason=seen.reason,
                        penalties=seen.penalties,
                        totals=seen.totals,
                        doubled=seen.doubled,
                        hands=seen.hands,
                        rules=rules,
                    )
                )
            )
        case ev.Reposed():
            out.kind = table_pb2.EVENT_KIND_REPOSED
            out.seat = seen.seat
            out.reposed.CopyFrom(table_pb2.Reposed(card=card(deck, seen.card)))
        case ev.ClaimWindowOpened():
            out.kind = table_pb2.EVENT_KIND_CLAIM_WINDOW_OPENED
            out.claim_window_opened.CopyFrom(
                table_pb2.ClaimWindowOpened(
                    card=card(deck, seen.card), closes_at=timestamp_ms(seen.closes_ms)
                )
            )
        case ev.ClaimWindowClosed():
            out.kind = table_pb2.EVENT_KIND_CLAIM_WINDOW_CLOSED
            out.claim_window_closed.CopyFrom(
                table_pb2.ClaimWindowClosed(card=card(deck, seen.card))
            )
        case ev.ClaimMade():
            out.kind = table_pb2.EVENT_KIND_CLAIM_MADE
            out.seat = seen.seat
            out.claim_made.CopyFrom(table_pb2.ClaimMade())
        case ev.Claimed():
            out.kind = table_pb2.EVENT_KIND_CLAIMED
            out.seat = seen.seat
            # Whether a penalty card was taken is public, which one is its taker's: ask
            # the logged event, since a hidden card and no card look alike once hidden.
            taken = isinstance(event, ev.Claimed) and event.penalty >= 0
            out.claimed.CopyFrom(
                table_pb2.Claimed(
                    card=card(deck, seen.card),
                    penalty_count=1 if taken else 0,
                    penalty_cards=cards(deck, [seen.penalty]),
                )
            )
        case ev.CardAnnounced():
            out.kind = table_pb2.EVENT_KIND_CARD_ANNOUNCED
            out.seat = seen.seat
            out.card_announced.CopyFrom(table_pb2.CardAnnounced())
        case ev.DeckRevealed():
            out.kind = table_pb2.EVENT_KIND_DECK_REVEALED
            out.deck_revealed.CopyFrom(
                table_pb2.DeckRevealed(
                    round=seen.round_no, order=seen.order, seed=seen.seed, salt=seen.salt
                )
            )
        case ev.GameEnded():
            out.kind = table_pb2.EVENT_KIND_GAME_ENDED
            out.game_ended.CopyFrom(game_ended(seen.winner, seen.reason, seen.totals))
    return out


def game_ended(
    winner: int, reason: ev.EndReason | None, totals: Sequence[int]
) -> table_pb2.GameEnded:
    """The game's result (``reason`` None: not known, for a game ended long ago)."""
    return table_pb2.GameEnded(
        winner_seat=winner if winner >= 0 else None,
        reason=_END[reason] if reason is not None else table_pb2.END_REASON_UNSPECIFIED,
        totals=[table_pb2.SeatScore(seat=s, points=t, total=t) for s, t in enumerate(totals)],
    )
