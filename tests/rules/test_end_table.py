"""`EndTable`: the people who run the service end a game from outside it. The
table applies it (never a seat); nobody wins, and their words travel with the
end, kept in the state."""

from __future__ import annotations

import json

from services.game.rules import SYSTEM, EndTable, Phase, Reason
from services.game.rules.events import DeckRevealed, EndReason, GameEnded
from services.game.rules.serial import dumps, loads

from .helpers import Table

NOTE = "Stuck after an upgrade: sorry, play again!"
HANDS = ["7S 8S 9S TS QD QH QC 2D 3D 4D 5C 6C 7C", "AS 3H 5S 7H 9S JH 2H 4S 6H 8S TH QS 9C"]


def test_the_table_ends_a_game_in_play_nobody_winning_with_its_note() -> None:
    table = Table(HANDS, "KH", "KD")
    table.state.totals = [12, 30]
    table.draw(table.state.current)
    assert table.refuse(0, EndTable(NOTE)).reason == Reason.NOT_YOUR_TURN
    events = table.act(SYSTEM, EndTable(NOTE))
    revealed, ended = events
    assert isinstance(revealed, DeckRevealed), "every dealt deck is shown in the end"
    assert ended == GameEnded(-1, EndReason.ENDED_BY_OPERATOR, (12, 30), NOTE)
    state = table.state
    assert (state.phase, state.winner, state.deadline_ms) == (Phase.GAME_OVER, -1, 0)
    assert (state.end_reason, state.end_note) == (EndReason.ENDED_BY_OPERATOR, NOTE)
    assert table.refuse(SYSTEM, EndTable("again")).reason == Reason.GAME_OVER


def test_the_note_is_kept_with_the_state_and_older_states_read_without_one() -> None:
    table = Table(HANDS, "KH", "KD")
    table.act(SYSTEM, EndTable(NOTE))
    loaded = loads(dumps(table.state))
    assert loaded == table.state and loaded.end_note == NOTE
    doc = json.loads(dumps(table.state))
    del doc["end_note"]  # as stored before the note was kept
    assert loads(json.dumps(doc).encode()).end_note == ""
