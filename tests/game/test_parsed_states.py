"""The replica's cache of parsed table states: a hit only for the very bytes kept."""

from __future__ import annotations

import random
import uuid

from services.game.parsed import ParsedStates
from services.game.rules import SYSTEM, DrawStock, apply, new_game, preset, serial
from services.game.rules.simulate import deal_action


def _states() -> tuple[bytes, bytes]:
    state = new_game(preset("cafe"), 2)
    dealt, _ = apply(state, SYSTEM, deal_action(state, random.Random(1)), 0)
    drawn, _ = apply(dealt, dealt.current, DrawStock(), 0)
    return serial.dumps(dealt), serial.dumps(drawn)


def test_the_same_bytes_give_the_kept_state_without_parsing_again() -> None:
    parsed = ParsedStates()
    table = uuid.uuid4()
    data, _ = _states()
    first = parsed.loads(table, data)
    assert parsed.loads(table, bytes(data)) is first
    assert serial.dumps(first) == data


def test_other_bytes_for_the_table_are_parsed_anew() -> None:
    """Another replica wrote the table since: its bytes differ, so its state is read."""
    parsed = ParsedStates()
    table = uuid.uuid4()
    before, after = _states()
    old = parsed.loads(table, before)
    new = parsed.loads(table, after)
    assert new is not old and serial.dumps(new) == after
    assert parsed.loads(table, after) is new


def test_a_state_kept_when_written_is_found_when_read_back() -> None:
    parsed = ParsedStates()
    table = uuid.uuid4()
    data, _ = _states()
    state = serial.loads(data)
    parsed.keep(table, data, state)
    assert parsed.loads(table, data) is state


def test_the_cache_is_bounded_and_forgets_the_least_recent_table() -> None:
    parsed = ParsedStates(most=2)
    data, _ = _states()
    a, b, c = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    kept_a = parsed.loads(a, data)
    kept_b = parsed.loads(b, data)
    assert parsed.loads(a, data) is kept_a  # a is now the most recent
    parsed.loads(c, data)  # b goes
    assert len(parsed) == 2
    assert parsed.loads(a, data) is kept_a
    assert parsed.loads(b, data) is not kept_b, "b was forgotten: parsed again"
