"""Hidden information: during whole games, nothing sent to a seat (responses,
views, hints, Watch events) carries a card of another hand or of the stock.

The ground truth is the server's own stored state after every action; the deal
is an explicit deck order, so the first hands are known before the game starts.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass

import grpc
import pytest

from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.game.rules.ruleset import CAFE

from .harness import Client, Watcher, create_table, login, play_to_end, shuffled_deck
from .stored import TableDb, card_ids, hands_left, table_db


@dataclass(frozen=True, slots=True)
class Layout:
    hands: tuple[tuple[int, ...], ...]
    stock: frozenset[int]
    public: frozenset[int]
    """Cards whose whereabouts every seat knows: face up now, or taken from the
    discard pile into a hand. A card reshuffled into the stock is secret again."""


class Truth:
    """Where every card was at every version of the table."""

    def __init__(self, db: TableDb, table_id: str) -> None:
        self._db = db
        self._table_id = table_id
        self._public: frozenset[int] = frozenset()
        self.at: dict[int, Layout] = {}

    async def record(self) -> None:
        version, state = await self._db.state(self._table_id)
        if version in self.at:
            return
        assert version - 1 in self.at or not self.at, "an action was not recorded"
        stock = frozenset(state.stock)
        face_up = {*state.discard, *(c for m in state.melds for c in m.cards)}
        self._public = (self._public - stock) | face_up
        self.at[version] = Layout(tuple(map(tuple, state.hands)), stock, self._public)

    def secret_from(self, viewer: int | None, version: int) -> set[int]:
        """The cards ``viewer`` (None: a spectator) may not see at ``version``."""
        layout = self.at[version]
        hidden = set(layout.stock)
        for seat, hand in enumerate(layout.hands):
            if seat != viewer:
                hidden |= set(hand) - layout.public
        return hidden

    def check_view(self, view: table_pb2.TableView, viewer: int | None) -> None:
        layout = self.at[view.version]
        assert not card_ids(view) & self.secret_from(viewer, view.version)
        # The view agrees with every other seat's own hand, by count only.
        assert [s.card_count for s in view.seats] == [len(h) for h in layout.hands]
        assert view.stock_size == len(layout.stock)
        mine = layout.hands[viewer] if viewer is not None else ()
        assert Counter(c.id for c in view.hand) == Counter(mine)


async def watch_all(watcher: Watcher) -> list[table_pb2.TableEvent]:
    return await watcher.to_end(timeout=45)


@pytest.mark.parametrize("seats", [2, 3, 4])
async def test_no_seat_ever_sees_a_hidden_card(
    channel: grpc.aio.Channel, fresh_dsn: str, seats: int
) -> None:
    order = shuffled_deck(seats)
    players = [await login(channel, f"P{i}") for i in range(seats)]
    spectator = await login(channel, "Spectator")
    table_id = await create_table(channel, players, deck_order=order)
    viewers: list[tuple[Client, int | None]] = [(p, i) for i, p in enumerate(players)]
    viewers.append((spectator, None))
    watchers = [asyncio.create_task(watch_all(c.watch(table_id))) for c, _ in viewers]  # type: ignore[attr-defined]

    async with table_db(fresh_dsn) as db:
        truth = Truth(db, table_id)
        await truth.record()
        # The explicit deal: order[0] first, one card at a time from seat 0, then the discard.
        dealt = truth.at[1]
        for seat in range(seats):
            assert dealt.hands[seat] == tuple(order[seat : seats * CAFE.hand_size : seats])
        assert dealt.public == {order[seats * CAFE.hand_size]}
        # At the deal a seat knows its hand and the turned card; a spectator, the card.
        assert len(truth.secret_from(0, 1)) == CAFE.deck.size - CAFE.hand_size - 1
        assert len(truth.secret_from(None, 1)) == CAFE.deck.size - 1

        async def after_action() -> None:
            await truth.record()
            views = [await client.view(table_id) for client, _ in viewers]
            for view, (_, seat) in zip(views, viewers, strict=True):
                truth.check_view(view, seat)
                # The one round's hands are laid face up only once it is over.
                over = view.phase == table_pb2.PHASE_GAME_OVER
                assert bool(view.round_results) == over
                if over:
                    final = truth.at[view.version].hands
                    assert hands_left(view.round_results[0]) == [list(h) for h in final]
            # The seat to play asks for a hint: it names only that seat's cards.
            current = views[0].current_seat
            hint = await players[current].call(
                "GetHint", game_pb2.GetHintRequest(table_id=table_id)
            )
            assert card_ids(hint) <= set(truth.at[views[0].version].hands[current])

        await after_action()
        await play_to_end(players, table_id, after_action=after_action)
        streams = await asyncio.gather(*watchers)

    for p in players:
        assert p.sent, "every seat played"
        for sent in p.sent:
            truth.check_view(sent.reply.view, sent.seat)
            assert not card_ids(sent.reply) & truth.secret_from(sent.seat, sent.version)
    for (_, seat), events in zip(viewers, streams, strict=True):
        assert events[-1].kind == table_pb2.EVENT_KIND_GAME_ENDED
        for event in events:
            leaked = card_ids(event) & truth.secret_from(seat, event.version)
            assert not leaked, (seat, event)
        dealt_event = events[0].dealt
        mine = truth.at[1].hands[seat] if seat is not None else ()
        assert [c.id for c in dealt_event.hand] == list(mine)
        # Others' draws from the stock arrive without the card; one's own with it.
        for event in events:
            if event.kind == table_pb2.EVENT_KIND_DREW:
                assert event.drew.HasField("card") == (event.seat == seat)
        # The deck is shown (to check the deal against its commitment) only once
        # its round is scored: right after RoundEnded, never while cards are hidden.
        kinds = [e.kind for e in events]
        reveals = [i for i, k in enumerate(kinds) if k == table_pb2.EVENT_KIND_DECK_REVEALED]
        assert reveals, "the deck is revealed at the end of the round"
        for i in reveals:
            assert kinds[i - 1] == table_pb2.EVENT_KIND_ROUND_ENDED
            assert list(events[i].deck_revealed.order) == order
        # So are every seat's cards left, to every viewer: what each seat held at
        # the round's end, in the RoundEnded event and in no other.
        [ended] = [e for e in events if e.kind == table_pb2.EVENT_KIND_ROUND_ENDED]
        final = truth.at[ended.version].hands
        assert ended.round_ended.result.cards_left_shown
        assert hands_left(ended.round_ended.result) == [list(h) for h in final]
        assert any(final), "someone held cards at the end"
