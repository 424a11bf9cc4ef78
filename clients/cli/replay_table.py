"""A finished game's replay as steps: the table after each event of its log.

The replay (`PlayerService.GetReplay`) is the table's event log. `steps` folds it,
event after event, into what a seat's `TableView` would have shown at that moment
(seats, melds, piles, whose turn, scores), plus every seat's hand where the log
shows them: to a player who sat at the table it shows every card (every hand
dealt, every card drawn or claimed); to anyone else, hands are counts only.

The fold reads the events, never the rules: cards move as the events say
(a draw into a hand, a meld out of it onto the table, a discard onto the pile),
so a replay shows what happened even where a rule would have said otherwise.
Presence events (a player's connection) are no move and make no step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from services.common.pb.rummy.v1 import cards_pb2, player_pb2, table_pb2

from .cards import Style
from .deckcheck import DealResult, shuffles_text
from .discards import owed
from .narrate import narrate
from .render import seat_name

Cards = tuple[cards_pb2.Card, ...]
Hands = tuple[Cards | None, ...]
"""Every seat's hand, in seat order; None where the replay hides it."""


@dataclass(frozen=True, slots=True)
class Step:
    """The table right after one event."""

    number: int
    """1 for the first event."""
    event: table_pb2.TableEvent
    view: table_pb2.TableView
    """As the viewer's seat (or a spectator) would have seen it then; never changed."""
    hands: Hands
    sentence: str
    """What happened, in words (styled)."""


def _turn_sentence(event: table_pb2.TableEvent, view: table_pb2.TableView) -> str:
    turn = event.turn_started.turn
    if view.HasField("my_seat") and view.my_seat == event.seat:
        return f"Your turn (turn {turn})."
    return f"{seat_name(view, event.seat)}'s turn (turn {turn})."


def _deck_sentence(event: table_pb2.TableEvent, checks: dict[int, DealResult]) -> str:
    number = event.deck_revealed.round
    check = checks.get(number)
    if check is None or not check.verified:
        why = check.problem if check is not None else "no commitment was shown at its deal"
        return f"Round {number}'s deck revealed: it does NOT verify ({why})."
    return f"Round {number}'s deck revealed: it matches the commitment shown at the deal."


class _Fold:
    """The table as the events so far made it."""

    def __init__(self, replay: player_pb2.GetReplayResponse) -> None:
        self.view = table_pb2.TableView(
            table_id=replay.table_id,
            ruleset=replay.ruleset,
            options=replay.options,
            turn_cap=replay.options.turn_cap,
            seats=[
                table_pb2.SeatView(
                    seat=s.seat,
                    player_id=s.player_id,
                    display_name=s.display_name,
                    is_bot=s.is_bot,
                    status=table_pb2.SEAT_STATUS_PLAYING,
                    connected=True,
                )
                for s in replay.seats
            ],
        )
        if replay.HasField("my_seat"):
            self.view.my_seat = replay.my_seat
        self.shown = replay.hands_shown
        seats = len(replay.seats)
        self.hands: list[list[cards_pb2.Card]] = [[] for _ in range(seats)]
        self.counts = [0] * seats
        self.melds: dict[int, table_pb2.MeldView] = {}
        self.discard: list[cards_pb2.Card] = []
        self.taken: tuple[int, cards_pb2.Card] | None = None
        """(seat, card) taken from the discard pile this turn and not used yet."""
        self.placing: tuple[int, int] | None = None
        """(seq, meld id) after a joker swap that placed its joker: the next event
        tells that placing again, and moves no card of the hand."""

    # --- cards in and out of hands ----------------------------------------------

    def give(self, seat: int, cards: Iterable[cards_pb2.Card], count: int | None = None) -> None:
        given = list(cards)
        self.hands[seat].extend(given)
        self.counts[seat] += len(given) if count is None else count

    def take(self, seat: int, cards: Iterable[cards_pb2.Card]) -> None:
        ids = {c.id for c in cards}
        self.hands[seat] = [c for c in self.hands[seat] if c.id not in ids]
        self.counts[seat] = max(0, self.counts[seat] - len(ids))
        if self.taken is not None and self.taken[1].id in ids:
            self.taken = None

    def put_meld(self, meld: table_pb2.MeldView) -> None:
        self.melds[meld.id] = meld

    # --- the events ---------------------------------------------------------------

    def apply(self, event: table_pb2.TableEvent) -> None:
        kind = event.WhichOneof("payload")
        seat = event.seat if event.HasField("seat") else -1
        placing, self.placing = self.placing, None
        if placing is not None and placing[0] + 1 == event.seq and kind in ("melded", "laid_off"):
            for meld in event.melded.melds if kind == "melded" else [event.laid_off.meld]:
                self.put_meld(meld)  # told again: the swap moved the cards already
            return
        handler = getattr(self, f"on_{kind}", None)
        if handler is not None:
            handler(event, seat)

    def on_dealt(self, event: table_pb2.TableEvent, _seat: int) -> None:
        dealt = event.dealt
        view = self.view
        view.round, view.turn, view.dealer_seat = dealt.round, 0, dealt.dealer_seat
        view.phase = table_pb2.PHASE_UNSPECIFIED  # dealt: nobody's turn yet
        view.stock_size = dealt.stock_size
        view.deck_commitment = dealt.deck_commitment
        view.ClearField("claim_window")
        view.rules.ClearField("contract_due")
        if dealt.HasField("contract_due"):
            view.rules.contract_due.CopyFrom(dealt.contract_due)
        self.melds.clear()
        self.discard = [dealt.discard_top] if dealt.HasField("discard_top") else []
        self.taken = None
        for s, size in enumerate(dealt.hand_sizes[: len(self.hands)]):
            cards = list(dealt.hands[s].cards) if s < len(dealt.hands) else []
            if not cards and view.HasField("my_seat") and s == view.my_seat:
                cards = list(dealt.hand)
            self.hands[s], self.counts[s] = cards, size
            view.seats[s].has_opened = False

    def on_turn_started(self, event: table_pb2.TableEvent, seat: int) -> None:
        self.view.current_seat, self.view.turn = seat, event.turn_started.turn
        self.view.phase = table_pb2.PHASE_DRAW
        self.taken = None

    def on_drew(self, event: table_pb2.TableEvent, seat: int) -> None:
        drew = event.drew
        self.give(seat, [drew.card] if drew.HasField("card") else [], count=1)
        self.view.stock_size = drew.stock_size
        self.view.phase = table_pb2.PHASE_PLAY

    def on_took_discard(self, event: table_pb2.TableEvent, seat: int) -> None:
        card = event.took_discard.card
        self._off_pile(card)
        self.give(seat, [card])
        self.taken = (seat, card)
        self.view.phase = table_pb2.PHASE_PLAY

    def _off_pile(self, card: cards_pb2.Card) -> None:
        """The card leaves the discard pile (the top one, unless the log says otherwise)."""
        for at in range(len(self.discard) - 1, -1, -1):
            if self.discard[at].id == card.id:
                del self.discard[at]
                return

    def on_reposed(self, event: table_pb2.TableEvent, seat: int) -> None:
        self.take(seat, [event.reposed.card])
        self.discard.append(event.reposed.card)
        self.taken = None

    def on_melded(self, event: table_pb2.TableEvent, seat: int) -> None:
        for meld in event.melded.melds:
            self.put_meld(meld)
            self.take(seat, meld.cards)
        self.view.seats[seat].has_opened = True

    def on_laid_off(self, event: table_pb2.TableEvent, seat: int) -> None:
        self.put_meld(event.laid_off.meld)
        self.take(seat, event.laid_off.cards)

    def on_joker_swapped(self, event: table_pb2.TableEvent, seat: int) -> None:
        swap = event.joker_swapped
        self.take(seat, swap.replacements)
        if not swap.HasField("placed_in"):
            self.give(seat, [swap.joker])
        else:
            placed = swap.placed_in
            was = self.melds.get(placed.id)
            before = {c.id for c in was.cards} if was is not None else set()
            # The joker goes from one meld to the other; the rest of the placing
            # comes from the hand.
            put = [c for c in placed.cards if c.id not in before and c.id != swap.joker.id]
            self.take(seat, put)
            self.put_meld(placed)
            self.placing = (event.seq, placed.id)
        self.put_meld(swap.meld)

    def on_discarded(self, event: table_pb2.TableEvent, seat: int) -> None:
        self.take(seat, [event.discarded.card])
        self.discard.append(event.discarded.card)

    def on_turn_passed(self, event: table_pb2.TableEvent, seat: int) -> None:
        """A turn the clock ended with a taken discard still owed: it goes back."""
        if event.turn_passed.reason == table_pb2.TURN_PASSED_REASON_LEFT or self.taken is None:
            return
        taker, card = self.taken
        if taker == seat and owed(self.view, seat, opened=self.view.seats[seat].has_opened):
            self.take(seat, [card])
            self.discard.append(card)

    def on_reshuffled(self, event: table_pb2.TableEvent, _seat: int) -> None:
        shuffled = event.reshuffled
        self.view.stock_size = shuffled.stock_size
        self.discard = [shuffled.discard_top] if shuffled.HasField("discard_top") else []

    def on_claim_window_opened(self, event: table_pb2.TableEvent, _seat: int) -> None:
        window = self.view.claim_window
        window.card.CopyFrom(event.claim_window_opened.card)
        window.closes_at.CopyFrom(event.claim_window_opened.closes_at)

    def on_claim_window_closed(self, _event: table_pb2.TableEvent, _seat: int) -> None:
        self.view.ClearField("claim_window")

    def on_claimed(self, event: table_pb2.TableEvent, seat: int) -> None:
        claimed = event.claimed
        self._off_pile(claimed.card)
        self.give(seat, [claimed.card, *claimed.penalty_cards], count=1 + claimed.penalty_count)
        self.view.stock_size = max(0, self.view.stock_size - claimed.penalty_count)
        self.view.ClearField("claim_window")

    def on_player_left(self, _event: table_pb2.TableEvent, seat: int) -> None:
        self.view.seats[seat].status = table_pb2.SEAT_STATUS_LEFT

    def on_player_eliminated(self, event: table_pb2.TableEvent, seat: int) -> None:
        self.view.seats[seat].status = table_pb2.SEAT_STATUS_ELIMINATED
        self.view.seats[seat].score_total = event.player_eliminated.total

    def on_bought_back(self, event: table_pb2.TableEvent, seat: int) -> None:
        self.view.seats[seat].status = table_pb2.SEAT_STATUS_PLAYING
        self.view.seats[seat].score_total = event.bought_back.total

    def on_round_ended(self, event: table_pb2.TableEvent, _seat: int) -> None:
        result = event.round_ended.result
        for score in result.scores:
            self.view.seats[score.seat].score_total = score.total
        self.view.round_results.append(result)
        self.view.phase = table_pb2.PHASE_ROUND_OVER
        self.view.ClearField("claim_window")

    def on_game_ended(self, event: table_pb2.TableEvent, _seat: int) -> None:
        ended = event.game_ended
        for total in ended.totals:
            self.view.seats[total.seat].score_total = total.total
        self.view.result.CopyFrom(ended)
        self.view.phase = table_pb2.PHASE_GAME_OVER

    # --- what a step keeps -----------------------------------------------------------

    def snapshot(self, event: table_pb2.TableEvent) -> tuple[table_pb2.TableView, Hands]:
        view = table_pb2.TableView()
        view.CopyFrom(self.view)
        view.version, view.last_seq = event.version, event.seq
        view.melds.extend(self.melds[i] for i in sorted(self.melds))
        view.discard_pile.extend(self.discard)
        view.discard_size = len(self.discard)
        if self.discard:
            view.discard_top.CopyFrom(self.discard[-1])
        for s, seat in enumerate(view.seats):
            seat.card_count = self.counts[s]
        mine = view.my_seat if view.HasField("my_seat") else -1
        if 0 <= mine < len(self.hands):
            view.hand.extend(self.hands[mine])
        hands = tuple(
            tuple(hand) if self.shown or s == mine else None for s, hand in enumerate(self.hands)
        )
        return view, hands


def steps(
    replay: player_pb2.GetReplayResponse,
    events: Sequence[table_pb2.TableEvent],
    style: Style,
    checks: Sequence[DealResult] = (),
) -> list[Step]:
    """The table after each event of ``events`` (every page of ``replay``), told
    in words as the viewer would read them; ``checks``: each deal's check, for the
    sentence of its reveal."""
    fold = _Fold(replay)
    by_round = {c.round: c for c in checks}
    made: list[Step] = []
    before = fold.snapshot(table_pb2.TableEvent())[0]
    for event in events:
        kind = event.WhichOneof("payload")
        if kind is None or kind == "player_connection":
            continue
        if kind == "turn_started":
            sentence = _turn_sentence(event, before)
        elif kind == "deck_revealed":
            sentence = _deck_sentence(event, by_round)
        else:
            sentence = narrate(event, before, style) or ""
        fold.apply(event)
        view, hands = fold.snapshot(event)
        made.append(Step(len(made) + 1, event, view, hands, sentence))
        before = view
    return made


@dataclass(frozen=True, slots=True)
class Replay:
    """A finished game ready to step through."""

    first: player_pb2.GetReplayResponse
    """The replay's first page: the table, its seats, its deals."""
    steps: Sequence[Step]
    checks: Sequence[DealResult]
    """Each deal's shuffle checked."""

    @property
    def shuffles(self) -> str:
        """`every shuffle verifies`, or which deal does not."""
        return shuffles_text(self.checks)

    @property
    def verified(self) -> bool:
        return all(c.verified for c in self.checks)
