"""The replica's cache of parsed table states: a hit only for the very bytes kept,
and a table's state at a version only once the database holds it."""

from __future__ import annotations

import random
import uuid

from services.game.parsed import ParsedStates
from services.game.records import SeatPlayer
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


SEATS = (SeatPlayer("p0", "Ann"), SeatPlayer("p1", "Bob"))


def test_a_state_is_known_at_a_version_only_once_the_database_holds_it() -> None:
    """Kept before its commit, a state is no table's state yet: a commit that
    fails must not leave a replica judging moves from it."""
    parsed = ParsedStates()
    table = uuid.uuid4()
    before, after = _states()
    parsed.loads(table, before, version=1, last_seq=3)  # read back: the table's at 1
    parsed.seat(table, SEATS, ())
    known = parsed.known(table)
    assert known is not None and (known.version, known.last_seq) == (1, 3)
    assert known.seats == SEATS

    written = serial.loads(after)
    parsed.keep(table, after, written)  # about to commit version 2
    assert parsed.known(table) is None
    parsed.committed(
        table, serial.loads(after), version=2, last_seq=5
    )  # not the state kept: ignored
    assert parsed.known(table) is None
    parsed.committed(table, written, version=2, last_seq=5)
    known = parsed.known(table)
    assert known is not None and known.state is written
    assert (known.version, known.last_seq, known.seats) == (2, 5, SEATS)


def test_a_table_is_known_only_with_its_seats() -> None:
    parsed = ParsedStates()
    table = uuid.uuid4()
    data, _ = _states()
    parsed.loads(table, data, version=1, last_seq=3)
    assert parsed.known(table) is None
    parsed.seat(table, SEATS, (1,))
    known = parsed.known(table)
    assert known is not None and known.bot_seats == (1,)
    # Seats never change at a table: a later read does not forget them.
    _, after = _states()
    parsed.loads(table, after, version=2, last_seq=5)
    known = parsed.known(table)
    assert known is not None and known.version == 2 and known.seats == SEATS


def test_a_forgotten_table_is_neither_kept_nor_known() -> None:
    parsed = ParsedStates()
    table = uuid.uuid4()
    data, _ = _states()
    kept = parsed.loads(table, data, version=1, last_seq=3)
    parsed.seat(table, SEATS, ())
    parsed.forget(table)
    assert len(parsed) == 0 and parsed.known(table) is None
    assert parsed.loads(table, data) is not kept
    parsed.forget(uuid.uuid4())  # never kept: nothing to do
