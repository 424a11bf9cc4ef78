"""The registry of event kinds agrees with the engine, the log and the wire: an
event added in one place and not the others fails here (its narration, on the
client's side, is checked in tests/cli/test_narrate.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from google.protobuf.message import Message

from services.common.pb.rummy.v1 import table_pb2
from services.game import eventlog
from services.game.event_kinds import (
    BY_CLASS,
    BY_NAME,
    FIELD_OF,
    KINDS,
    WHOLE,
    WIRE_KIND,
    form_key,
    table_event,
)
from services.game.event_wire import Viewing
from services.game.rules import events as ev
from services.game.servicer import watched

from .event_samples import SAMPLES, Sample

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PAYLOAD_FIELDS = {f.name for f in table_pb2.TableEvent.DESCRIPTOR.oneofs_by_name["payload"].fields}
STORED = Path(__file__).parent / "golden" / "events_v1.jsonl"
"""`SAMPLES`, in order, as the previous release logged them."""


def engine_events() -> set[type[ev.Event]]:
    # A slotted dataclass leaves its pre-slots class among the subclasses: the
    # class the module names is the one events are made of.
    return {c for c in ev.Event.__subclasses__() if getattr(ev, c.__name__) is c}


def sent(sample: Sample, viewer: int | None) -> table_pb2.TableEvent:
    logged = eventlog.LoggedEvent(9, 4, sample.event, AT)
    return table_event(logged, Viewing(viewer, sample.rules))


def test_every_engine_event_has_a_kind_with_a_name_of_its_own() -> None:
    assert set(BY_CLASS) == engine_events()
    assert len(BY_CLASS) == len(BY_NAME) == len(KINDS), "a class or a name used twice"


def test_every_kind_has_samples_of_every_message_it_sends() -> None:
    sampled = {(type(s.event), s.sent_as) for s in SAMPLES}
    for kind in KINDS:
        sends = {payload_field(m) for m in kind.sends}
        assert {(kind.cls, f) for f in sends} <= sampled, f"no sample of {kind.name}"
        assert {f for c, f in sampled if c is kind.cls} <= sends, f"{kind.name} sends more"


def payload_field(message: type[Message]) -> str:
    """The `TableEvent.payload` field that carries ``message``."""
    return FIELD_OF[message.DESCRIPTOR.full_name]


def test_every_payload_field_is_sent_for_some_engine_event() -> None:
    """All of them are: even a presence change is an engine event, which the
    service logs itself (`PlayerConnection`)."""
    assert {s.sent_as for s in SAMPLES} == PAYLOAD_FIELDS


def test_every_payload_field_has_an_event_kind_of_its_name() -> None:
    assert set(WIRE_KIND) == PAYLOAD_FIELDS
    named = {v for v in table_pb2.EventKind.values() if v != table_pb2.EVENT_KIND_UNSPECIFIED}
    assert set(WIRE_KIND.values()) == named


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{type(s.event).__name__}-{s.sent_as}")
def test_each_sample_goes_on_the_wire_in_its_field_to_every_viewer(sample: Sample) -> None:
    for viewer in (None, 0, 1, 2):
        event = sent(sample, viewer)
        assert event.WhichOneof("payload") == sample.sent_as
        assert event.kind == WIRE_KIND[sample.sent_as]
        assert (event.seq, event.version, event.occurred_at.ToDatetime(UTC)) == (9, 4, AT)
        assert event.HasField("seat") == hasattr(sample.event, "seat")


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{type(s.event).__name__}-{s.sent_as}")
def test_viewers_with_one_form_key_are_sent_one_message(sample: Sample) -> None:
    """Watch builds an event's message once per `form_key` and sends it to every
    watcher with that key: equal keys must mean equal messages, and an event that
    hides nothing is one form for everybody."""
    viewers = (None, 0, 1, 2, 3)
    keys = {v: form_key(sample.event, Viewing(v, sample.rules)) for v in viewers}
    messages = {v: sent(sample, v) for v in viewers}
    for a in viewers:
        for b in viewers:
            if keys[a] == keys[b]:
                assert messages[a] == messages[b], (a, b)
    if all(sample.event.visible_to(v) is sample.event for v in viewers):
        assert set(keys.values()) == {WHOLE}


def test_a_card_drawn_from_the_stock_is_one_hidden_form_for_all_but_its_drawer() -> None:
    [sample] = [s for s in SAMPLES if isinstance(s.event, ev.Drew) and not s.event.from_discard]
    drawer = sample.event.seat
    keys = {v: form_key(sample.event, Viewing(v, sample.rules)) for v in (None, 0, 1, 2, 3)}
    assert keys[drawer] == WHOLE
    assert len({k for v, k in keys.items() if v != drawer}) == 1


def test_watch_builds_each_form_of_a_logged_event_once() -> None:
    [sample] = [s for s in SAMPLES if isinstance(s.event, ev.Drew) and not s.event.from_discard]
    logged = eventlog.LoggedEvent(9, 4, sample.event, AT)
    sent_to = {v: watched(logged, Viewing(v, sample.rules)) for v in (None, 0, 1, 2, 3)}
    assert len({id(m) for m in sent_to.values()}) == len(logged.forms) == 2
    assert sent_to[sample.event.seat].event == sent(sample, sample.event.seat)
    assert sent_to[None].event == sent(sample, None)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{type(s.event).__name__}-{s.sent_as}")
def test_each_sample_comes_back_from_the_log_as_it_went_in(sample: Sample) -> None:
    event = sample.event
    assert eventlog.decode(eventlog.kind_of(event), eventlog.encode(event)) == event


def test_events_logged_by_the_previous_release_read_alike_both_ways() -> None:
    """Mid-upgrade, replicas of two releases read each other's events: the log's
    rows are written exactly as the previous release wrote them."""
    rows = [json.loads(line) for line in STORED.read_text().splitlines()]
    assert [r["kind"] for r in rows] == [eventlog.kind_of(s.event) for s in SAMPLES]
    for row, sample in zip(rows, SAMPLES, strict=True):
        assert eventlog.decode(row["kind"], row["payload"].encode()) == sample.event
        assert eventlog.encode(sample.event).decode() == row["payload"]
