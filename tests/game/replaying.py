"""A replay read back into the engine's actions, as a client that checks a game
would: each deal from its revealed deck, and each seat's move from the event
that tells it; every other event is what the engine makes of those.

Covers what the tests' games do (deals, draws, melds, lay-offs, joker swaps,
discards, leaving, timeouts); an event of another move fails loudly.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from services.common.pb.rummy.v1 import cards_pb2, player_pb2, table_pb2
from services.common.wire import options
from services.game.rules import actions as act
from services.game.rules.engine import apply
from services.game.rules.events import Event
from services.game.rules.melds import MeldKind, Side
from services.game.rules.ruleset import effective_options, preset
from services.game.rules.state import GameState, new_game

_KINDS = {table_pb2.MELD_KIND_GROUP: MeldKind.GROUP, table_pb2.MELD_KIND_RUN: MeldKind.RUN}
CONSEQUENCES = frozenset(
    {
        "turn_started",
        "reshuffled",
        "card_announced",
        "player_eliminated",
        "bought_back",
        "round_ended",
        "game_ended",
        "deck_revealed",
        "player_connection",
    }
)
"""Events the engine makes of a move (or presence, which is no move at all)."""


def _ids(cards: Sequence[cards_pb2.Card]) -> tuple[int, ...]:
    return tuple(c.id for c in cards)


def _spec(meld: table_pb2.MeldView) -> act.MeldSpec:
    return act.MeldSpec(_ids(meld.cards), (), _KINDS[meld.kind])


def _placed(before: tuple[int, ...], after: table_pb2.MeldView) -> act.LayOff:
    """The lay-off that made ``after`` of a meld that held ``before``."""
    cards = _ids(after.cards)
    if after.kind == table_pb2.MELD_KIND_GROUP:
        return act.LayOff(after.id, tuple(c for c in cards if c not in before), Side.AUTO)
    if cards[: len(before)] == before:
        return act.LayOff(after.id, cards[len(before) :], Side.HIGH)
    assert cards[len(cards) - len(before) :] == before, "cards put inside a run"
    return act.LayOff(after.id, cards[: len(cards) - len(before)], Side.LOW)


def actions(
    events: Sequence[table_pb2.TableEvent], deals: Sequence[player_pb2.DealCheck]
) -> Iterator[tuple[int, act.Action, int]]:
    """(seat, action, when in ms) of every move the events tell, in order."""
    decks = {d.round: d.revealed for d in deals}
    melds: dict[int, tuple[int, ...]] = {}
    swapped = False
    for e in events:
        kind = e.WhichOneof("payload")
        now = e.occurred_at.ToMilliseconds()
        if swapped and kind in ("melded", "laid_off"):
            swapped = False  # where the swap put its joker: told again, no move of its own
            continue
        swapped = False
        if kind == "dealt":
            deck = decks[e.dealt.round]
            melds.clear()
            yield act.SYSTEM, act.Deal(tuple(deck.order), deck.seed, bytes.fromhex(deck.salt)), now
        elif kind == "drew":
            yield e.seat, act.DrawStock(), now
        elif kind == "took_discard":
            yield e.seat, act.TakeDiscard(), now
        elif kind == "melded":
            for m in e.melded.melds:
                melds[m.id] = _ids(m.cards)
            yield e.seat, act.Meld(tuple(_spec(m) for m in e.melded.melds)), now
        elif kind == "laid_off":
            meld = e.laid_off.meld
            yield e.seat, _placed(melds[meld.id], meld), now
            melds[meld.id] = _ids(meld.cards)
        elif kind == "joker_swapped":
            swap = e.joker_swapped
            new_meld, lay_off = None, None
            if swap.HasField("placed_in"):
                placed = swap.placed_in
                if placed.id in melds:
                    lay_off = _placed(melds[placed.id], placed)
                else:
                    new_meld = _spec(placed)
                melds[placed.id] = _ids(placed.cards)
            swapped = swap.HasField("placed_in")
            put_in = _ids(swap.replacements)
            melds[swap.meld.id] = _ids(swap.meld.cards)
            yield (
                e.seat,
                act.SwapJoker(
                    swap.meld.id,
                    swap.joker.id,
                    put_in[0],
                    new_meld,
                    lay_off,
                    second=put_in[1] if len(put_in) > 1 else -1,
                ),
                now,
            )
        elif kind == "discarded":
            if e.discarded.automatic:
                yield act.SYSTEM, act.Timeout(), now
            else:
                yield e.seat, act.Discard(e.discarded.card.id), now
        elif kind == "turn_passed":
            if e.turn_passed.reason == table_pb2.TURN_PASSED_REASON_TIMED_OUT:
                yield act.SYSTEM, act.Timeout(), now
        elif kind == "player_left":
            yield e.seat, act.Leave(), now
        elif kind == "reposed":
            yield e.seat, act.Reposer(), now
        elif kind not in CONSEQUENCES:
            raise NotImplementedError(f"no move read from a {kind} event")


def replayed(
    first: player_pb2.GetReplayResponse, events: Sequence[table_pb2.TableEvent]
) -> tuple[GameState, list[Event]]:
    """The state the replay's moves lead to from a new table, and every event the
    engine made on the way."""
    rules = preset(first.ruleset)
    state = new_game(
        rules, len(first.seats), effective_options(rules, options.from_message(first.options))
    )
    made: list[Event] = []
    for seat, action, now in actions(events, first.deals):
        state, more = apply(state, seat, action, now)
        made.extend(more)
    return state, made
