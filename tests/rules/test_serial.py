"""The state as bytes and back: lossless, versioned, and a loaded state plays on
exactly as the original."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.game.rules import (
    SYSTEM,
    Action,
    GameState,
    Leave,
    Meld,
    MeldSpec,
    Phase,
    TableOptions,
    Timeout,
    apply,
    new_game,
    preset,
)
from services.game.rules.bots import GreedyBot, RandomPlayer
from services.game.rules.events import EndReason, Event
from services.game.rules.ruleset import Contract
from services.game.rules.serial import FORMAT_VERSION, StateFormatError, dumps, loads
from services.game.rules.simulate import Player, deal_action, play_game

from . import first_format
from .helpers import CAFE, Table
from .test_event_details import three_deals_to_200

STATES = int(os.environ.get("RULES_SERIAL_STATES", "40"))


def next_move(
    state: GameState, players: list[Player], rng: random.Random, now: int
) -> tuple[int, Action, int]:
    """The next (seat, action, time) of a self-playing table: deal, move, or the clock."""
    if state.phase == Phase.DEAL:
        return SYSTEM, deal_action(state, rng), now
    seat = state.current
    move = players[seat].move(state, seat)
    if move is None:
        return SYSTEM, Timeout(), state.deadline_ms
    return seat, move, now + 1


def play_on(state: GameState, seed: int, greedy: bool, now: int) -> tuple[list[Event], bytes]:
    """Finish the game from ``state``: every event, and the final state as bytes."""
    rng = random.Random(seed)
    players: list[Player] = [GreedyBot() if greedy else RandomPlayer(rng) for _ in state.hands]
    log: list[Event] = []
    for _ in range(100_000):
        if state.phase == Phase.GAME_OVER:
            return log, dumps(state)
        seat, action, now = next_move(state, players, rng, now)
        state, events = apply(state, seat, action, now)
        log.extend(events)
    raise AssertionError("the game did not end")


@settings(max_examples=STATES, deadline=None)
@given(
    seats=st.integers(2, 4),
    seed=st.integers(0, 2**32 - 1),
    steps=st.integers(0, 400),
    greedy=st.booleans(),
    rounds=st.integers(1, 3),
)
def test_serial_round_trip_of_random_mid_game_states(
    seats: int, seed: int, steps: int, greedy: bool, rounds: int
) -> None:
    rng = random.Random(seed)
    players: list[Player] = [GreedyBot() if greedy else RandomPlayer(rng) for _ in range(seats)]
    state = new_game(CAFE, seats, TableOptions(rounds=rounds))
    now = 0
    for _ in range(steps):
        if state.phase == Phase.GAME_OVER:
            break
        seat, action, now = next_move(state, players, rng, now)
        state, _ = apply(state, seat, action, now)
    data = dumps(state)
    loaded = loads(data)
    assert dumps(loaded) == data
    assert loaded == state, "every field comes back equal"
    # ...and the loaded table plays on exactly as the original.
    assert play_on(loaded, seed + 1, greedy, now) == play_on(state, seed + 1, greedy, now)


def test_serial_round_trip_keeps_melds_joker_suits_and_results() -> None:
    table = Table(
        ["7S 7H JK 4C 5C 6C AH 3C 5D 9D JC KH 2S", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
        "KD",
        "2D",
        options=TableOptions(rounds=2, elimination_cap=0, turn_cap=50, turn_timer_ms=20_000),
    )
    table.draw(0)
    joker = table.card(0, "JK")
    table.act(0, Meld((MeldSpec(table.cards(0, "7S 7H JK"), ((joker, 2),)),)))
    state = table.state
    loaded = loads(dumps(state))
    assert loaded == state
    assert loaded.melds[0].joker_suits == ((joker, 2),)
    assert loaded.options == state.options


def test_serial_keeps_why_the_game_ended_and_reads_states_stored_before_it_was_kept() -> None:
    table = Table(
        ["7S 7H JK 4C 5C 6C AH 3C 5D 9D JC KH 2S", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
        "KD",
    )
    table.act(1, Leave())
    assert table.state.end_reason == EndReason.OTHERS_LEFT == loads(dumps(table.state)).end_reason
    doc = json.loads(first_format.dumps(table.state))
    doc["turn"] = doc["turn"][:18]  # as stored by an earlier version of the engine
    older = loads(json.dumps(doc).encode())
    assert older.end_reason == "" and older.winner == 0 and older.phase == table.state.phase
    doc["turn"].append("no such reason")
    with pytest.raises(StateFormatError):
        loads(json.dumps(doc).encode())
    named = json.loads(dumps(table.state))
    named["end_reason"] = "no such reason"
    with pytest.raises(StateFormatError):
        loads(json.dumps(named).encode())


def test_serial_keeps_each_rounds_totals_and_doubling() -> None:
    state = three_deals_to_200().state
    loaded = loads(dumps(state))
    assert loaded.results == state.results
    assert [(r.totals, r.doubled) for r in loaded.results] == [
        ((188, 0), True),
        ((188, 188), True),
        ((376, 188), True),
    ]


def test_serial_reads_round_results_stored_before_their_totals_were_kept() -> None:
    state = three_deals_to_200().state
    doc = json.loads(first_format.dumps(state))
    # As stored by an earlier version: round, winner, reason and points only.
    doc["results"] = [entry[:4] for entry in doc["results"]]
    older = loads(json.dumps(doc).encode())
    assert [r.penalties for r in older.results] == [r.penalties for r in state.results]
    assert [r.totals for r in older.results] == [(188, 0), (188, 188), (376, 188)]
    assert not any(r.doubled for r in older.results), "not known then: not doubled"
    assert loads(dumps(older)) == older


def test_serial_keeps_each_rounds_hands_left_and_reads_states_stored_before_them() -> None:
    state = three_deals_to_200().state
    assert all(len(r.hands) == state.seats for r in state.results)
    assert any(any(r.hands) for r in state.results), "someone held cards at a round's end"
    assert loads(dumps(state)).results == state.results
    doc = json.loads(first_format.dumps(state))
    # As stored before the hands left were kept: six fields per round.
    doc["results"] = [entry[:6] for entry in doc["results"]]
    older = loads(json.dumps(doc).encode())
    assert [r.hands for r in older.results] == [(), (), ()], "unknown, not empty"
    assert [r.totals for r in older.results] == [r.totals for r in state.results]


def test_serial_format_carries_its_version_and_refuses_others() -> None:
    table = Table(
        ["7S 7H JK 4C 5C 6C AH 3C 5D 9D JC KH 2S", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
        "KD",
    )
    doc = json.loads(dumps(table.state))
    assert doc["v"] == FORMAT_VERSION
    doc["v"] = FORMAT_VERSION + 1
    with pytest.raises(StateFormatError):
        loads(json.dumps(doc).encode())
    for garbage in (b"", b"{}", b"[1, 2]", b"5", b'"v"', b"not json", b"\xff", b'{"v": 1}'):
        with pytest.raises(StateFormatError):
            loads(garbage)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 200) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


WRITERS = {"first": first_format.dumps, "named": dumps}
"""Each format the engine reads, by the writer of its documents."""
DAMAGED = [
    *(("first", key) for key in ("v", "ruleset", "options", "seats", "hands", "melds", "turn")),
    *(
        ("named", key)
        for key in (
            *("v", "ruleset", "options", "seats", "hands", "melds", "phase", "current"),
            *("deadline_ms", "results", "end_reason", "deal_order", "deal_salt", "opened"),
        )
    ),
]


@settings(max_examples=STATES * 2, deadline=None)
@given(damaged=st.sampled_from(DAMAGED), value=JSON)
def test_serial_damaged_documents_raise_state_format_error_only(
    damaged: tuple[str, str], value: object
) -> None:
    """A damaged document is refused with StateFormatError (never another error),
    unless what it holds is a well-formed state (an empty list of melds, say):
    then that state goes back into a document and out again unchanged."""
    table = Table(
        ["7S 7H JK 4C 5C 6C AH 3C 5D 9D JC KH 2S", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
        "KD",
    )
    written, key = damaged
    doc = json.loads(WRITERS[written](table.state))
    doc[key] = value
    try:
        state = loads(json.dumps(doc).encode())
    except StateFormatError:
        return
    assert loads(dumps(state)) == state


@pytest.mark.parametrize(
    ("written", "key", "value"),
    [
        ("first", "hands", None),
        ("first", "seats", []),
        ("first", "hands", [["", None]]),
        ("first", "stock", [1, "2"]),
        ("first", "turn", []),
        ("first", "results", [[1, 0, "went_out", [0, 6], [0], False]]),
        ("first", "results", [[1, 0, "went_out", [0, 6], [0, "6"], False]]),
        ("first", "results", [[1, 0, "went_out", [0, 6, 1]]]),
        ("first", "results", [[1, 0, "went_out", [0, "6"]]]),
        ("first", "results", [[1, 0, "went_out", [0, 6], [0, 6], False, [[1, 2]]]]),
        ("first", "results", [[1, 0, "went_out", [0, 6], [0, 6], False, [[], ["2"]]]]),
        ("first", "results", [[1, 0, "went_out", [0, 6], [0, 6], False, 7]]),
        ("named", "hands", None),
        ("named", "seats", []),
        ("named", "hands", [["", None]]),
        ("named", "stock", [1, "2"]),
        ("named", "phase", []),
        ("named", "current", "1"),
        ("named", "moved", None),
        ("named", "melds", [[1, 0]]),
        ("named", "deal_order", ["7S"]),
        ("named", "deal_salt", 7),
        ("named", "results", [[1, 0, "went_out", [0, 6], [0], False, []]]),
        ("named", "results", [[1, 0, "went_out", [0, 6], [0, "6"], False, []]]),
        ("named", "results", [[1, 0, "went_out", [0, 6], [0, 6], False, [[1, 2]]]]),
        ("named", "results", [[1, 0, "went_out", [0, 6], [0, 6], False, [[], ["2"]]]]),
        ("named", "results", [[1, 0, "went_out", [0, 6], [0, 6], False, 7]]),
        ("named", "options", {"turn_timer_ms": 45_000}),
    ],
)
def test_serial_fields_of_the_wrong_shape_are_refused(
    written: str, key: str, value: object
) -> None:
    table = Table(
        ["7S 7H JK 4C 5C 6C AH 3C 5D 9D JC KH 2S", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
        "KD",
    )
    doc = json.loads(WRITERS[written](table.state))
    assert key in doc, "a field the format has"
    doc[key] = value
    with pytest.raises(StateFormatError):
        loads(json.dumps(doc).encode())


def test_copy_is_independent_and_complete() -> None:
    table = Table(
        ["7S 7H JK 4C 5C 6C AH 3C 5D 9D JC KH 2S", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
        "KD",
    )
    state = table.state
    copy = state.copy()
    for field in dataclasses.fields(GameState):
        original, copied = getattr(state, field.name), getattr(copy, field.name)
        assert copied == original, field.name
        if isinstance(original, list):
            assert copied is not original, f"{field.name} is shared"
    copy.hands[0].append(copy.stock.pop())
    assert dumps(state) != dumps(copy) and len(state.hands[0]) == 13


STORED = Path(__file__).parent / "golden" / "states_v1.jsonl"
"""States as the first format's writer stored them, each with how to make it again:
a greedy game (rule set, seats, seed, options) after so many actions, or the
table of `test_serial_round_trip_keeps_melds_joker_suits_and_results`."""


def _made_again(recipe: dict[str, Any]) -> GameState:
    if recipe["made_by"] == "joker_suits":
        table = Table(
            ["7S 7H JK 4C 5C 6C AH 3C 5D 9D JC KH 2S", "AD 3D 5D 7D 9S JD KS 2C 4S 6C 8C TH QH"],
            "KD",
            "2D",
            options=TableOptions(rounds=2, elimination_cap=0, turn_cap=50, turn_timer_ms=20_000),
        )
        table.draw(0)
        joker = table.card(0, "JK")
        table.act(0, Meld((MeldSpec(table.cards(0, "7S 7H JK"), ((joker, 2),)),)))
        return table.state
    chosen = recipe["options"]
    options = TableOptions(
        rounds=chosen["rounds"],
        buy_backs=chosen["buy_backs"],
        contracts=tuple(Contract(*c) for c in chosen["contracts"]),
    )
    states: list[GameState] = []

    def keep(_: GameState, seat: int, a: Action, after: GameState, events: list[Event]) -> None:
        states.append(after)

    players = [GreedyBot() for _ in range(recipe["seats"])]
    rng = random.Random(recipe["seed"])
    play_game(preset(recipe["ruleset"]), players, rng, options=options, observe=keep)
    return states[recipe["actions"] - 1]


@pytest.mark.parametrize("line", STORED.read_text().splitlines())
def test_serial_reads_the_states_the_first_format_stored_and_writes_them_named(line: str) -> None:
    recipe = json.loads(line)
    stored = orjson.dumps(recipe["state"])
    state = _made_again(recipe)
    assert first_format.dumps(state) == stored, "the first format's writer, as it ran"
    assert loads(stored) == state
    named = dumps(loads(stored))
    assert json.loads(named)["v"] == FORMAT_VERSION == 2
    assert loads(named) == state
