"""Every engine event has a form in the log and on the wire."""

from __future__ import annotations

from datetime import UTC, datetime

from services.common.pb.rummy.v1 import table_pb2
from services.game import convert, eventlog
from services.game.rules import events as ev
from services.game.rules.ruleset import CLASSIC

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_every_engine_event_kind_can_be_logged() -> None:
    # By name: a slotted dataclass leaves its pre-slots class among the subclasses.
    engine = {cls.__name__ for cls in ev.Event.__subclasses__()}
    assert engine == set(eventlog._KINDS), "an event the log cannot replay"


def test_a_buy_back_survives_the_log_and_reaches_every_seat() -> None:
    bought = ev.BoughtBack(seat=2, total=54, used=1)
    stored = eventlog.decode(eventlog.kind_of(bought), eventlog.encode(bought))
    assert stored == bought
    for viewer in (0, 2, None):
        sent = convert.table_event(7, 5, AT, stored, viewer, CLASSIC)
        assert sent.kind == table_pb2.EVENT_KIND_BOUGHT_BACK
        assert sent.seat == 2
        assert sent.WhichOneof("payload") == "bought_back"
        assert (sent.bought_back.total, sent.bought_back.used) == (54, 1)
