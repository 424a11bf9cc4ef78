"""A finished game's replay: whole and exact for the players who sat at it (the
engine, given its moves, ends in the stored state), a spectator's view for
anyone else, and every shuffle checkable."""

from __future__ import annotations

import grpc
import pytest

from services.common.pb.rummy.v1 import table_pb2
from services.game.event_kinds import table_event
from services.game.event_wire import Viewing
from services.game.eventlog import LoggedEvent
from services.game.rules import serial
from services.game.rules.fairness import verify_deck

from .harness import create_table, login, play_to_end, shuffled_deck
from .player_calls import fetch, played_game, whole_replay
from .replaying import replayed


@pytest.mark.parametrize(("seats", "seed", "rounds"), [(2, 11, 1), (3, 5, 2), (4, 8, 2)])
async def test_a_replay_applied_to_the_engine_ends_in_the_stored_state(
    channel: grpc.aio.Channel, fresh_dsn: str, seats: int, seed: int, rounds: int
) -> None:
    players = [await login(channel, f"R{i}") for i in range(seats)]
    table_id = await create_table(channel, players, deck_order=shuffled_deck(seed), rounds=rounds)
    await play_to_end(players, table_id)
    first, events = await whole_replay(players[1], table_id, page_size=25)
    assert [e.seq for e in events] == list(range(1, len(events) + 1)), "every event, once"
    assert first.hands_shown and first.my_seat == 1
    assert len(first.deals) == rounds

    state, made = replayed(first, events)
    [row] = await fetch(fresh_dsn, "SELECT state FROM tables WHERE id = $1", table_id)
    assert serial.dumps(state) == row["state"]

    # The engine's events, shown as to a player who sat there, are the replay's.
    moves = [e for e in events if e.kind != table_pb2.EVENT_KIND_PLAYER_CONNECTION]
    assert len(made) == len(moves)
    viewing = Viewing(1, state.ruleset, state.options.contracts, every_hand=True)
    for sent, event in zip(moves, made, strict=True):
        at = sent.occurred_at.ToDatetime(tzinfo=None)
        expected = table_event(LoggedEvent(sent.seq, sent.version, event, at), viewing)
        expected.occurred_at.CopyFrom(sent.occurred_at)
        assert sent == expected


async def test_a_non_participant_gets_what_a_spectator_watched(
    channel: grpc.aio.Channel,
) -> None:
    table_id = await played_game(channel)
    outsider = await login(channel, "Outsider")
    first, events = await whole_replay(outsider, table_id, page_size=7)
    assert not first.hands_shown and not first.HasField("my_seat")
    watched = await outsider.watch(table_id, 0).to_end()
    assert events == watched
    dealt = [e.dealt for e in events if e.HasField("dealt")]
    assert dealt and all(not d.hands and not d.hand for d in dealt)
    assert all(not e.drew.HasField("card") for e in events if e.HasField("drew"))


async def test_a_participant_sees_every_hand_and_their_own_as_dealt(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, n) for n in ("Ann", "Ben")]
    table_id = await create_table(channel, players, deck_order=shuffled_deck(11))
    await play_to_end(players, table_id)
    first, events = await whole_replay(players[0], table_id)
    assert first.hands_shown and first.my_seat == 0
    watched = await players[0].watch(table_id, 0).to_end()
    [dealt] = [e.dealt for e in events if e.HasField("dealt")]
    [own] = [e.dealt for e in watched if e.HasField("dealt")]
    assert [len(h.cards) for h in dealt.hands] == list(dealt.hand_sizes)
    assert list(dealt.hands[0].cards) == list(own.hand) == list(dealt.hand)
    assert not own.hands
    others = [e for e in events if e.HasField("drew") and e.seat == 1]
    assert others and all(e.drew.HasField("card") for e in others)
    assert len(events) == len(watched)


async def test_every_deal_comes_with_its_commitment_and_reveal(
    channel: grpc.aio.Channel,
) -> None:
    players = [await login(channel, f"D{i}") for i in range(2)]
    table_id = await create_table(channel, players, deck_order=shuffled_deck(3), rounds=2)
    await play_to_end(players, table_id)
    first, events = await whole_replay(players[0], table_id)
    shown = [e.dealt.deck_commitment for e in events if e.HasField("dealt")]
    revealed = [e.deck_revealed for e in events if e.HasField("deck_revealed")]
    assert [d.round for d in first.deals] == [1, 2]
    assert [d.deck_commitment for d in first.deals] == shown
    assert [d.revealed for d in first.deals] == revealed
    for deal in first.deals:
        r = deal.revealed
        assert verify_deck(r.order, r.seed, r.salt, deal.deck_commitment)
