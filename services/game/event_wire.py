"""Each engine event as the payload of a `rummy.v1.TableEvent`, for one viewer.

One function per event kind, named after the event; `event_kinds.KINDS` says
which function serves which kind. Each is given the event as the viewer may see
it (``seen``: `Event.visible_to` hid what is not theirs), the event as logged
(only a claim needs it), and who is looking under which rules (`Viewing`). It
returns the payload message alone: `event_kinds.table_event` puts it in its
`TableEvent` field, with the kind, the seq, the time and the seat.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.duration_pb2 import Duration

from services.common.pb.rummy.v1 import table_pb2

from . import convert
from .convert import card, cards, contract_message, meld_view, round_result, timestamp_ms
from .rules import events as ev
from .rules.ruleset import Contract, Ruleset


@dataclass(frozen=True, slots=True)
class Viewing:
    """Who is looking, under which rules: one per Watch stream."""

    viewer: int | None
    """A seat, or None for a spectator."""
    rules: Ruleset
    contracts: tuple[Contract, ...] = ()
    """The table's own list of contracts, when its options chose one (else the
    rule set's)."""
    every_hand: bool = False
    """A finished game's replay for a player who sat at it: nothing is hidden
    (every hand dealt, every card drawn), as at a real table once it is over."""


_PASSED = {
    "left": table_pb2.TURN_PASSED_REASON_LEFT,
    "no_move": table_pb2.TURN_PASSED_REASON_NO_MOVE,
}


def _contract_of(contracts: tuple[Contract, ...], round_no: int) -> Contract | None:
    """Deal ``round_no``'s contract: the list repeats (as `GameState.contract`)."""
    return contracts[(max(round_no, 1) - 1) % len(contracts)] if contracts else None


def round_dealt(seen: ev.RoundDealt, _: ev.RoundDealt, at: Viewing) -> table_pb2.Dealt:
    viewer, deck = at.viewer, at.rules.deck
    hand = seen.hands[viewer] if viewer is not None and viewer < len(seen.hands) else ()
    return table_pb2.Dealt(
        round=seen.round_no,
        dealer_seat=seen.dealer,
        hand=cards(deck, hand),
        hand_sizes=[len(h) for h in seen.hands],
        discard_top=card(deck, seen.discard_top),
        stock_size=seen.stock_size,
        contract_due=contract_message(
            _contract_of(at.contracts or at.rules.contracts, seen.round_no)
        ),
        deck_commitment=seen.commitment,
        hands=[table_pb2.DealtHand(cards=cards(deck, h)) for h in seen.hands]
        if at.every_hand
        else (),
    )


def turn_began(seen: ev.TurnBegan, _: ev.TurnBegan, at: Viewing) -> table_pb2.TurnStarted:
    return table_pb2.TurnStarted(turn=seen.turn, deadline=timestamp_ms(seen.deadline_ms))


def turn_resumed(seen: ev.TurnResumed, _: ev.TurnResumed, at: Viewing) -> table_pb2.TurnResumed:
    return table_pb2.TurnResumed(
        turn=seen.turn,
        deadline=timestamp_ms(seen.deadline_ms),
        claim_deadline=timestamp_ms(seen.claim_deadline_ms) if seen.claim_deadline_ms else None,
        stopped_for=Duration(
            seconds=seen.stopped_ms // 1000, nanos=seen.stopped_ms % 1000 * 1_000_000
        ),
    )


def drew(seen: ev.Drew, _: ev.Drew, at: Viewing) -> table_pb2.Drew | table_pb2.TookDiscard:
    """From the stock (the card shown to the drawer alone) or the discard pile."""
    deck = at.rules.deck
    if seen.from_discard:
        return table_pb2.TookDiscard(card=card(deck, seen.card))
    return table_pb2.Drew(card=card(deck, seen.card), stock_size=seen.stock_size)


def reshuffled(seen: ev.Reshuffled, _: ev.Reshuffled, at: Viewing) -> table_pb2.Reshuffled:
    top = card(at.rules.deck, seen.discard_top)
    return table_pb2.Reshuffled(stock_size=seen.stock_size, discard_top=top, count=seen.count)


def melded(seen: ev.Melded, _: ev.Melded, at: Viewing) -> table_pb2.Melded:
    return table_pb2.Melded(
        melds=[meld_view(m, at.rules) for m in seen.melds],
        opened=seen.opened,
        opening_points=seen.opening_points,
    )


def laid_off(seen: ev.LaidOff, _: ev.LaidOff, at: Viewing) -> table_pb2.LaidOff:
    return table_pb2.LaidOff(
        cards=cards(at.rules.deck, seen.cards), meld=meld_view(seen.meld, at.rules)
    )


def joker_swapped(seen: ev.JokerSwapped, _: ev.JokerSwapped, at: Viewing) -> table_pb2.JokerSwapped:
    rules = at.rules
    return table_pb2.JokerSwapped(
        joker=card(rules.deck, seen.joker),
        replacements=cards(rules.deck, [seen.replacement, seen.second]),
        meld=meld_view(seen.meld, rules),
        # On the table, so every viewer sees where the joker went.
        placed_in=meld_view(seen.placed_in, rules) if seen.placed_in else None,
    )


def discarded(seen: ev.Discarded, _: ev.Discarded, at: Viewing) -> table_pb2.Discarded:
    return table_pb2.Discarded(card=card(at.rules.deck, seen.card), automatic=seen.automatic)


def turn_passed(seen: ev.TurnPassed, _: ev.TurnPassed, at: Viewing) -> table_pb2.TurnPassed:
    return table_pb2.TurnPassed(
        reason=_PASSED.get(seen.reason, table_pb2.TURN_PASSED_REASON_TIMED_OUT)
    )


def player_left(seen: ev.PlayerLeft, _: ev.PlayerLeft, at: Viewing) -> table_pb2.PlayerLeft:
    return table_pb2.PlayerLeft()


def player_connection(
    seen: ev.PlayerConnection, _: ev.PlayerConnection, at: Viewing
) -> table_pb2.PlayerConnection:
    return table_pb2.PlayerConnection(connected=seen.connected)


def player_eliminated(
    seen: ev.PlayerEliminated, _: ev.PlayerEliminated, at: Viewing
) -> table_pb2.PlayerEliminated:
    return table_pb2.PlayerEliminated(total=seen.total)


def bought_back(seen: ev.BoughtBack, _: ev.BoughtBack, at: Viewing) -> table_pb2.BoughtBack:
    return table_pb2.BoughtBack(total=seen.total, used=seen.used)


def round_ended(seen: ev.RoundEnded, _: ev.RoundEnded, at: Viewing) -> table_pb2.RoundEnded:
    return table_pb2.RoundEnded(
        result=round_result(
            round_no=seen.round_no,
            winner=seen.winner,
            reason=seen.reason,
            penalties=seen.penalties,
            totals=seen.totals,
            doubled=seen.doubled,
            hands=seen.hands,
            rules=at.rules,
        )
    )


def game_ended(seen: ev.GameEnded, _: ev.GameEnded, at: Viewing) -> table_pb2.GameEnded:
    return convert.game_ended(seen.winner, seen.reason, seen.totals, seen.note)


def reposed(seen: ev.Reposed, _: ev.Reposed, at: Viewing) -> table_pb2.Reposed:
    return table_pb2.Reposed(card=card(at.rules.deck, seen.card))


def claim_window_opened(
    seen: ev.ClaimWindowOpened, _: ev.ClaimWindowOpened, at: Viewing
) -> table_pb2.ClaimWindowOpened:
    return table_pb2.ClaimWindowOpened(
        card=card(at.rules.deck, seen.card), closes_at=timestamp_ms(seen.closes_ms)
    )


def claim_window_closed(
    seen: ev.ClaimWindowClosed, _: ev.ClaimWindowClosed, at: Viewing
) -> table_pb2.ClaimWindowClosed:
    return table_pb2.ClaimWindowClosed(card=card(at.rules.deck, seen.card))


def claim_made(seen: ev.ClaimMade, _: ev.ClaimMade, at: Viewing) -> table_pb2.ClaimMade:
    return table_pb2.ClaimMade()


def claimed(seen: ev.Claimed, logged: ev.Claimed, at: Viewing) -> table_pb2.Claimed:
    deck = at.rules.deck
    # Whether a penalty card was taken is public, which one is its taker's: ask
    # the logged event, since a hidden card and no card look alike once hidden.
    return table_pb2.Claimed(
        card=card(deck, seen.card),
        penalty_count=1 if logged.penalty >= 0 else 0,
        penalty_cards=cards(deck, [seen.penalty]),
    )


def card_announced(
    seen: ev.CardAnnounced, _: ev.CardAnnounced, at: Viewing
) -> table_pb2.CardAnnounced:
    return table_pb2.CardAnnounced()


def deck_revealed(seen: ev.DeckRevealed, _: ev.DeckRevealed, at: Viewing) -> table_pb2.DeckRevealed:
    return table_pb2.DeckRevealed(
        round=seen.round_no, order=seen.order, seed=seen.seed, salt=seen.salt
    )
