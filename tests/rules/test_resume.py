"""The table clock's ``Resume``: when nobody could reach the service (no move could
be made) from ``stopped_ms`` to ``restarted_ms``, the turn in play gets back the
time it had left when the clock stopped, counted from the restart, and at least
`RESUME_LEAST_MS` (or the whole timer, if shorter) from now; an open claim window
opens again for its whole length. Once per stop; never for a turn begun since."""

from __future__ import annotations

import orjson

from services.game.rules import SYSTEM, Phase, Reason, Resume, TableOptions, Timeout
from services.game.rules.events import TurnResumed
from services.game.rules.resuming import RESUME_LEAST_MS
from services.game.rules.serial import dumps, loads

from . import first_format
from .helpers import Table
from .test_claims import table as contract_table
from .test_timeout import NO_ACES, OTHER


def test_resume_gives_the_turn_back_the_time_it_had_left_when_the_clock_stopped() -> None:
    table = Table([NO_ACES, OTHER], "JK")  # turn 1 began at 0, due at 45 s
    table.now = 92_000  # the service is back at 90 s, this turn resumed at 92 s
    events = table.act(SYSTEM, Resume(30_000, 90_000))
    assert events == [TurnResumed(0, 1, 90_000 + 15_000, 0, 60_000)]
    assert table.state.deadline_ms == 105_000 and table.state.resumed_ms == 90_000
    assert table.state.current == 0 and table.state.phase == Phase.DRAW
    table.now = 104_999
    assert table.refuse(SYSTEM, Timeout()).reason == Reason.TIMEOUT_NOT_DUE
    table.now = 105_000
    assert table.timeout()[0].seat == 0, "then the turn times out as any other"


def test_resume_gives_at_least_ten_seconds_from_now() -> None:
    table = Table([NO_ACES, OTHER], "JK")
    table.now = 95_000
    table.act(SYSTEM, Resume(44_000, 60_000))  # 1 s left at the stop
    assert table.state.deadline_ms == 95_000 + RESUME_LEAST_MS == 105_000
    short = Table([NO_ACES, OTHER], "JK", options=TableOptions(turn_timer_ms=2_000))
    short.now = 9_000
    short.act(SYSTEM, Resume(1_900, 8_000))
    assert short.state.deadline_ms == 11_000, "the whole timer, when it is shorter"


def test_resume_once_per_stop_and_again_for_a_later_one() -> None:
    table = Table([NO_ACES, OTHER], "JK")
    table.now = 100_000
    table.act(SYSTEM, Resume(30_000, 90_000))
    assert table.refuse(SYSTEM, Resume(30_000, 90_000)).reason == Reason.CLOCK_NOT_STOPPED
    table.now = 119_000
    assert table.state.deadline_ms == 110_000
    table.act(SYSTEM, Resume(93_000, 118_000))  # 17 s left of the resumed turn
    assert table.state.deadline_ms == 118_000 + 17_000


def test_resume_refused_for_a_turn_begun_after_the_restart_or_due_before_the_stop() -> None:
    table = Table([NO_ACES, OTHER], "JK")
    table.now = 50_000
    assert table.refuse(SYSTEM, Resume(46_000, 49_000)).reason == Reason.CLOCK_NOT_STOPPED
    table.timeout()  # turn 2 begins at 50 s
    table.now = 60_000
    refusal = table.refuse(SYSTEM, Resume(20_000, 40_000))
    assert refusal.reason == Reason.CLOCK_NOT_STOPPED, "the turn began once it was back"
    assert table.refuse(SYSTEM, Resume(60_000, 60_000)).reason == Reason.CLOCK_NOT_STOPPED


def test_resume_of_a_turn_begun_before_the_stop_was_recorded_gives_at_most_its_timer() -> None:
    """Moves may commit in the moment between the service coming back and the stop
    being recorded: such a turn gets its own timer from the restart, not the stop."""
    table = Table([NO_ACES, OTHER], "JK")  # turn 1 began at 0
    table.now = 1_500
    events = table.act(SYSTEM, Resume(-60_000, 1_000))
    assert table.state.deadline_ms == 1_000 + 45_000
    assert events == [TurnResumed(0, 1, 46_000, 0, 61_000)]


def test_resume_does_not_bring_back_a_turn_due_before_the_stop_for_its_claim_window() -> None:
    t = contract_table(turn_timer_ms=1_000, claim_window_ms=3_000)
    t.now = 100
    t.draw(0)  # the turn is due at 1 s, its claim window at 3.1 s
    t.now = 10_000
    assert t.refuse(SYSTEM, Resume(2_000, 9_000)).reason == Reason.CLOCK_NOT_STOPPED


def test_resume_only_by_the_table_clock_and_only_during_a_turn() -> None:
    table = Table([NO_ACES, OTHER], "JK")
    table.now = 100_000
    assert table.refuse(0, Resume(30_000, 90_000)).reason == Reason.NOT_YOUR_TURN
    over = Table([NO_ACES, OTHER], "JK")
    over.state.phase = Phase.GAME_OVER
    assert over.refuse(SYSTEM, Resume(30_000, 90_000)).reason == Reason.NO_ROUND_IN_PLAY


def test_resume_after_the_draw_keeps_the_drawn_card_and_the_phase() -> None:
    table = Table([NO_ACES, OTHER], "JK", "KS")
    table.now = 10_000
    table.draw(0)
    hand = list(table.state.hands[0])
    table.now = 200_000
    table.act(SYSTEM, Resume(20_000, 190_000))
    assert table.state.phase == Phase.PLAY and table.state.hands[0] == hand
    assert table.state.deadline_ms == 190_000 + 25_000


def test_resume_opens_a_contract_claim_window_again() -> None:
    t = contract_table()
    t.now = 1_000
    t.draw(0)  # the window closes at 4 s, the turn at 45 s
    t.now = 30_000
    events = t.act(SYSTEM, Resume(2_000, 25_000))
    resumed = events[0]
    assert isinstance(resumed, TurnResumed)
    assert resumed.claim_deadline_ms == t.state.claim_deadline_ms == 33_000
    assert t.state.deadline_ms == 25_000 + 43_000
    assert t.state.claim_card >= 0, "the card is on offer again"


def test_resume_is_kept_when_stored_and_older_states_have_none() -> None:
    table = Table([NO_ACES, OTHER], "JK")
    table.now = 92_000
    table.act(SYSTEM, Resume(30_000, 90_000))
    again = loads(dumps(table.state))
    assert again.resumed_ms == 90_000 and again.deadline_ms == 105_000
    doc = orjson.loads(first_format.dumps(table.state))
    doc["turn"] = doc["turn"][:19]  # as stored before the clock could stop
    assert loads(orjson.dumps(doc)).resumed_ms == 0
