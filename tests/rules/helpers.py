"""Script a table from hands written in notation.

`deck_order` turns hands like ``"7S 8S 9S ..."`` into the explicit deck order a
`Deal` takes (``order[0]`` is the top card, dealt first), so a test sets up the
exact situation a rule is about and plays it through the engine's one entry
point. `Table` wraps the state and the clock and names cards by notation.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from services.game.rules import (
    SYSTEM,
    Action,
    Deal,
    Discard,
    DrawStock,
    GameState,
    LayOff,
    Meld,
    MeldSpec,
    Phase,
    Reason,
    RuleError,
    Ruleset,
    Side,
    SwapJoker,
    TableOptions,
    TakeDiscard,
    Timeout,
    apply,
    new_game,
    preset,
)
from services.game.rules.events import Drew, Event
from services.game.rules.melds import TableMeld
from services.game.rules.serial import dumps
from services.game.rules.state import SeatStatus

CAFE = preset("cafe")


def codes(cards: Sequence[int], ruleset: Ruleset = CAFE) -> str:
    """Notation for card ids, in their order: ``"7S 8S JK"``."""
    return " ".join(ruleset.deck.code(c) for c in cards)


def sorted_codes(cards: Sequence[int], ruleset: Ruleset = CAFE) -> str:
    """Notation for card ids by suit then rank, jokers last: order-free comparisons."""
    deck = ruleset.deck
    key = {c: (deck.is_joker(c), deck.suit[c], deck.rank[c]) for c in cards}
    return codes(sorted(cards, key=key.__getitem__), ruleset)


class _Ids:
    """Hands out distinct ids for codes: the first 7S named is copy 0, the next copy 1."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.used: set[int] = set()

    def take(self, code: str) -> int:
        for card in self.ruleset.deck.ids_of(code):
            if card not in self.used:
                self.used.add(card)
                return card
        raise ValueError(f"the deck has no more {code}")


def deck_order(
    hands: Sequence[str | None],
    discard: str,
    stock: str = "",
    *,
    ruleset: Ruleset = CAFE,
    dealer: int | None = None,
    size: int | None = None,
) -> tuple[int, ...]:
    """The deck order that deals ``hands[seat]`` to each seat, turns ``discard`` up and
    puts ``stock`` on top of the stock (first code drawn first); every other card
    follows in id order. ``None`` marks a seat that is not dealt in (eliminated).

    Cards are dealt one at a time from the seat left of ``dealer`` (default: the
    last seat, as at a new table). Each hand holds ``size`` cards (default: the
    rule set's hand size; `contract` deals 10 or 12 cards by deal)."""
    seats = len(hands)
    dealer = seats - 1 if dealer is None else dealer
    size = ruleset.hand_size if size is None else size
    ids = _Ids(ruleset)
    parsed: dict[int, list[int]] = {}
    for seat, text in enumerate(hands):
        if text is None:
            continue
        cards = [ids.take(code) for code in text.split()]
        if len(cards) != size:
            raise ValueError(f"seat {seat} needs {size} cards, got {len(cards)}")
        parsed[seat] = cards
    order_of_play = [(dealer + 1 + i) % seats for i in range(seats)]
    order: list[int] = []
    for i in range(size):
        order.extend(parsed[seat][i] for seat in order_of_play if seat in parsed)
    order.append(ids.take(discard))
    order.extend(ids.take(code) for code in stock.split())
    order.extend(c for c in ruleset.deck.ids() if c not in ids.used)
    return tuple(order)


class Table:
    """A game driven through `apply`, with cards named in notation.

    ``events`` holds the events of the last action; ``log`` every event so far."""

    def __init__(
        self,
        hands: Sequence[str],
        discard: str,
        stock: str = "",
        *,
        options: TableOptions | None = None,
        ruleset: Ruleset = CAFE,
        seed: int = 0,
    ) -> None:
        self.ruleset = ruleset
        self.deck = ruleset.deck
        self.now = 0
        self.state = new_game(ruleset, len(hands), options)
        self.events: list[Event] = []
        self.log: list[Event] = []
        self.deal(hands, discard, stock, seed=seed)

    # --- acting -------------------------------------------------------------

    def act(self, seat: int, action: Action) -> list[Event]:
        self.state, self.events = apply(self.state, seat, action, self.now)
        self.log.extend(self.events)
        return self.events

    def refuse(self, seat: int, action: Action) -> RuleError:
        """Apply an action that must be refused; check that nothing changed."""
        before = dumps(self.state)
        with pytest.raises(RuleError) as caught:
            apply(self.state, seat, action, self.now)
        assert dumps(self.state) == before, "a refused action changed the state"
        assert isinstance(caught.value.reason, Reason)
        assert caught.value.message
        return caught.value

    def deal(
        self, hands: Sequence[str | None], discard: str, stock: str = "", *, seed: int = 0
    ) -> list[Event]:
        order = deck_order(
            hands,
            discard,
            stock,
            ruleset=self.ruleset,
            dealer=self.state.dealer,
            size=self.ruleset.cards_dealt(self.state.round_no + 1),
        )
        return self.act(SYSTEM, Deal(order, seed))

    def draw_action(self) -> DrawStock:
        return DrawStock()

    def discard_action(self, seat: int, code: str) -> Discard:
        return Discard(self.card(seat, code))

    def draw(self, seat: int) -> list[Event]:
        return self.act(seat, DrawStock())

    def draw_and_throw(self, seat: int) -> list[Event]:
        """``seat`` draws from the stock and throws the card it drew: its hand stays
        as it was. When the draw ends the round (a blocked deal) nothing is thrown."""
        events = self.draw(seat)
        drew = [e for e in events if isinstance(e, Drew)]
        if not drew or self.state.phase != Phase.PLAY:
            return events
        thrown = self.act(seat, Discard(drew[0].card))
        self.events = events + thrown
        return self.events

    def take(self, seat: int) -> list[Event]:
        return self.act(seat, TakeDiscard())

    def discard(self, seat: int, code: str) -> list[Event]:
        return self.act(seat, Discard(self.card(seat, code)))

    def meld(self, seat: int, *melds: str) -> list[Event]:
        return self.act(seat, self.meld_action(seat, *melds))

    def meld_action(self, seat: int, *melds: str) -> Meld:
        """One `Meld` action laying each string of codes as one meld, cards in order."""
        taken: set[int] = set()
        specs = []
        for text in melds:
            cards = self.cards(seat, text, exclude=taken)
            taken.update(cards)
            specs.append(MeldSpec(cards))
        return Meld(tuple(specs))

    def lay_off(self, seat: int, meld_id: int, text: str, side: Side = Side.AUTO) -> list[Event]:
        return self.act(seat, LayOff(meld_id, self.cards(seat, text), side))

    def swap(
        self,
        seat: int,
        meld_id: int,
        replacement: str,
        *,
        new_meld: str | None = None,
        lay_off: int | None = None,
        side: Side = Side.AUTO,
    ) -> SwapJoker:
        """The `SwapJoker` action for the (first) joker of ``meld_id``; ``new_meld``
        names the hand cards that go with the joker (the joker goes where ``JK``
        stands), ``lay_off`` the meld that takes the joker. Not applied."""
        joker = self.joker_of(meld_id)
        card = self.card(seat, replacement)
        spec = None
        if new_meld is not None:
            others = iter(self.cards(seat, new_meld.replace("JK", "").strip(), exclude={card}))
            spec = MeldSpec(
                tuple(joker if code == "JK" else next(others) for code in new_meld.split())
            )
        placed = LayOff(lay_off, (joker,), side) if lay_off is not None else None
        return SwapJoker(meld_id, joker, card, new_meld=spec, lay_off=placed)

    def timeout(self) -> list[Event]:
        """The table clock fires at the current deadline."""
        self.now = max(self.now, self.state.deadline_ms)
        return self.act(SYSTEM, Timeout())

    def pass_turns(self, count: int) -> None:
        """Let ``count`` turns time out before their draw (no card moves)."""
        for _ in range(count):
            self.timeout()

    # --- reading ------------------------------------------------------------

    def card(self, seat: int, code: str, exclude: set[int] | frozenset[int] = frozenset()) -> int:
        """The id of a card ``code`` in the hand of ``seat`` (lowest id first)."""
        for card in sorted(self.state.hands[seat]):
            if card not in exclude and self.deck.code(card) == code.upper():
                return card
        raise AssertionError(f"seat {seat} holds no {code}: {self.hand(seat)}")

    def cards(
        self, seat: int, text: str, exclude: set[int] | frozenset[int] = frozenset()
    ) -> tuple[int, ...]:
        """Distinct ids from the hand of ``seat`` for ``text``, in the order written."""
        taken = set(exclude)
        out = []
        for code in text.split():
            card = self.card(seat, code, taken)
            taken.add(card)
            out.append(card)
        return tuple(out)

    def hand(self, seat: int) -> str:
        return sorted_codes(self.state.hands[seat], self.ruleset)

    def table_meld(self, meld_id: int) -> TableMeld:
        index = self.state.meld(meld_id)
        assert index >= 0, f"no meld {meld_id} on the table"
        return self.state.melds[index]

    def meld_codes(self, meld_id: int) -> str:
        return codes(self.table_meld(meld_id).cards, self.ruleset)

    def joker_of(self, meld_id: int) -> int:
        return next(c for c in self.table_meld(meld_id).cards if self.deck.is_joker(c))

    def top(self) -> str:
        return self.deck.code(self.state.discard[-1])

    def kinds(self) -> list[str]:
        """Names of the events of the last action, in order."""
        return [type(e).__name__ for e in self.events]


def card_places(state: GameState) -> list[int]:
    """Every card id once per place it is in (hands, stock, discard pile, table)."""
    places = [c for hand in state.hands for c in hand]
    places += state.stock + state.discard
    places += [c for meld in state.melds for c in meld.cards]
    return places


def assert_conserved(state: GameState) -> None:
    """Each card of the deck is in exactly one place."""
    places = card_places(state)
    assert sorted(places) == list(state.ruleset.deck.ids())


def playing(state: GameState) -> list[int]:
    return [s for s in range(state.seats) if state.status[s] == SeatStatus.PLAYING]
