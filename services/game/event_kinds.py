"""Every kind of table event in one table: its name in the log, how its payload
is stored and read back, and what it becomes on the wire.

An engine event (`rules/events.py`) is logged as a row of `table_events`
(`eventlog`): its kind's ``name`` and a payload, its fields as a JSON object
written and read by the kind's `PayloadCodec`, made from the class's own field
types (melds as the state stores them, `rules/records.py`). `table_event` turns
a logged event into the `TableEvent` one viewer is sent, by the kind's ``wire``
function (`event_wire`).

To add a kind of event: its class in `rules/events.py`; its payload message in
`proto/rummy/v1/table.proto` (a `TableEvent.payload` field and an `EventKind`
value named after it); its wire function in `event_wire.py`; its row below; a
sample in `tests/game/event_samples.py`; its sentence in `clients/cli/narrate.py`.
`tests/game/test_event_kinds.py` and `tests/cli/test_narrate.py` fail until
every one is there.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import orjson
from google.protobuf.message import Message

from services.common.pb.rummy.v1 import table_pb2

from . import event_wire as wire
from .event_wire import Viewing
from .rules import events as ev
from .rules.melds import TableMeld
from .rules.records import meld_from_record, meld_record

if TYPE_CHECKING:
    from .eventlog import LoggedEvent

E = TypeVar("E", bound=ev.Event)


# --- the payload in the log ----------------------------------------------------


def _meld_out(meld: TableMeld) -> dict[str, Any]:
    # Wrapped: replicas of the previous release, which may read it mid-upgrade,
    # tell a meld from other values by this.
    return {"meld": meld_record(meld)}


def _meld_in(value: dict[str, Any]) -> TableMeld:
    return meld_from_record(value["meld"])


def _tuple_in(inner: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
    if inner is None:
        return tuple
    return lambda values: tuple(inner(v) for v in values)


def _codec_of(hint: Any) -> tuple[Callable[[Any], Any] | None, Callable[[Any], Any] | None]:
    """How a field of this type is written and read: (writer, reader), None where
    orjson's value will do (it writes tuples as arrays and enums as their values)."""
    if hint in (int, bool, str):
        return None, None
    if hint is TableMeld:
        return _meld_out, _meld_in
    if isinstance(hint, type) and issubclass(hint, ev.EndReason):
        return None, hint
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        write, read = _codec_of(args[0])
        if write is None:
            return None, _tuple_in(read)
        return (lambda values: [write(v) for v in values]), _tuple_in(read)
    if origin in (types.UnionType, typing.Union) and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        write, read = _codec_of(inner)
        return (
            None if write is None else (lambda v: None if v is None else write(v)),
            None if read is None else (lambda v: None if v is None else read(v)),
        )
    raise TypeError(f"no way to log a field of type {hint}")


_ALWAYS = object()
"""A field that is always written, whatever its value."""


class PayloadCodec(Generic[E]):
    """An event's fields by name, as a JSON object, and back. A field this build
    does not know (logged by a newer replica, mid-upgrade) is left out when read:
    events gain fields with defaults, so older readers lose only news; a field
    missing (logged before it existed) takes its default. A ``sparse`` field is
    written only when it differs from its default: one added since events were
    first logged, so the rows of the events that do not use it stay as they were."""

    def __init__(self, cls: type[E], sparse: tuple[str, ...] = ()) -> None:
        self._cls = cls
        hints = typing.get_type_hints(cls)
        self._writers: list[tuple[str, Callable[[Any], Any] | None, object]] = []
        self._readers: dict[str, Callable[[Any], Any] | None] = {}
        for f in dataclasses.fields(cls):
            write, read = _codec_of(hints[f.name])
            if f.name in sparse and f.default is dataclasses.MISSING:
                raise TypeError(f"{cls.__name__}.{f.name} has no default to leave out")
            self._writers.append((f.name, write, f.default if f.name in sparse else _ALWAYS))
            self._readers[f.name] = read

    def encode(self, event: E) -> bytes:
        fields = {}
        for name, write, unless in self._writers:
            value = getattr(event, name)
            if unless is not _ALWAYS and value == unless:
                continue
            fields[name] = value if write is None else write(value)
        return orjson.dumps(fields)

    def decode(self, payload: bytes | str) -> E:
        fields = {}
        readers = self._readers
        for name, value in orjson.loads(payload).items():
            if name in readers:
                read = readers[name]
                fields[name] = value if read is None else read(value)
        return self._cls(**fields)


# --- the registry --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Kind(Generic[E]):
    name: str
    """The `kind` column of its rows: never changed once logged (it is not the
    class's name, which may change)."""
    cls: type[E]
    sends: tuple[type[Message], ...]
    """The `TableEvent.payload` messages it may become."""
    wire: Callable[[E, E, Viewing], Message]
    sparse: tuple[str, ...] = ()
    """Fields written only when they differ from their default (`PayloadCodec`)."""
    payload: PayloadCodec[E] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "payload", PayloadCodec(self.cls, self.sparse))


T = table_pb2  # the wire's messages, short for the table below
KINDS: tuple[Kind[Any], ...] = (
    Kind("RoundDealt", ev.RoundDealt, (T.Dealt,), wire.round_dealt),
    Kind("TurnBegan", ev.TurnBegan, (T.TurnStarted,), wire.turn_began),
    Kind("Drew", ev.Drew, (T.Drew, T.TookDiscard), wire.drew),
    Kind("Reshuffled", ev.Reshuffled, (T.Reshuffled,), wire.reshuffled),
    Kind("Melded", ev.Melded, (T.Melded,), wire.melded),
    Kind("LaidOff", ev.LaidOff, (T.LaidOff,), wire.laid_off),
    Kind("JokerSwapped", ev.JokerSwapped, (T.JokerSwapped,), wire.joker_swapped),
    Kind("Discarded", ev.Discarded, (T.Discarded,), wire.discarded),
    Kind("TurnPassed", ev.TurnPassed, (T.TurnPassed,), wire.turn_passed),
    Kind("TurnResumed", ev.TurnResumed, (T.TurnResumed,), wire.turn_resumed),
    Kind("PlayerLeft", ev.PlayerLeft, (T.PlayerLeft,), wire.player_left),
    Kind("PlayerConnection", ev.PlayerConnection, (T.PlayerConnection,), wire.player_connection),
    Kind("PlayerEliminated", ev.PlayerEliminated, (T.PlayerEliminated,), wire.player_eliminated),
    Kind("BoughtBack", ev.BoughtBack, (T.BoughtBack,), wire.bought_back),
    Kind("RoundEnded", ev.RoundEnded, (T.RoundEnded,), wire.round_ended),
    Kind("GameEnded", ev.GameEnded, (T.GameEnded,), wire.game_ended, sparse=("note",)),
    Kind("Reposed", ev.Reposed, (T.Reposed,), wire.reposed),
    Kind(
        "ClaimWindowOpened", ev.ClaimWindowOpened, (T.ClaimWindowOpened,), wire.claim_window_opened
    ),
    Kind("ClaimMade", ev.ClaimMade, (T.ClaimMade,), wire.claim_made),
    Kind(
        "ClaimWindowClosed", ev.ClaimWindowClosed, (T.ClaimWindowClosed,), wire.claim_window_closed
    ),
    Kind("Claimed", ev.Claimed, (T.Claimed,), wire.claimed),
    Kind("CardAnnounced", ev.CardAnnounced, (T.CardAnnounced,), wire.card_announced),
    Kind("DeckRevealed", ev.DeckRevealed, (T.DeckRevealed,), wire.deck_revealed),
)
BY_NAME: dict[str, Kind[Any]] = {k.name: k for k in KINDS}
BY_CLASS: dict[type[ev.Event], Kind[Any]] = {k.cls: k for k in KINDS}


# --- on the wire ---------------------------------------------------------------

_PAYLOAD_FIELDS = table_pb2.TableEvent.DESCRIPTOR.oneofs_by_name["payload"].fields
FIELD_OF: dict[str, str] = {
    f.message_type.full_name: f.name for f in _PAYLOAD_FIELDS if f.message_type is not None
}
"""The `TableEvent.payload` field of each payload message, by its full name."""
WIRE_KIND: dict[str, table_pb2.EventKind.ValueType] = {
    f.name: table_pb2.EventKind.Value(f"EVENT_KIND_{f.name.upper()}") for f in _PAYLOAD_FIELDS
}
"""The `EventKind` of each payload field: the field's name in capitals."""


WHOLE = "whole"
"""`form_key` of an event seen whole."""
EVERY_HAND = "every hand"
"""`form_key` in a replay that shows every hand."""


def form_key(event: ev.Event, viewing: Viewing) -> Hashable:
    """What tells one viewer's `table_event` of ``event`` from another's, under one
    table's rules: equal keys, equal messages. Seen whole, every viewer's form is
    the same; else it is what they see (cards hidden alike are one form), and for
    a deal also who they are (its form shows the viewer's own hand)."""
    if viewing.every_hand:
        return EVERY_HAND
    seen = event.visible_to(viewing.viewer)
    if seen is event:
        return WHOLE
    return (viewing.viewer, seen) if isinstance(event, ev.RoundDealt) else seen


def table_event(logged: LoggedEvent, viewing: Viewing) -> table_pb2.TableEvent:
    """One logged event as ``viewing.viewer`` may see it (whole, in a replay that
    shows every hand). Its seat is the event's own `seat`, for the events about
    one seat (not a deal, a reshuffle, a round's or the game's end, a claim
    window)."""
    event = logged.event
    seen = event if viewing.every_hand else event.visible_to(viewing.viewer)
    payload = BY_CLASS[type(event)].wire(seen, event, viewing)
    field_name = FIELD_OF[payload.DESCRIPTOR.full_name]
    out = table_pb2.TableEvent(seq=logged.seq, version=logged.version, kind=WIRE_KIND[field_name])
    out.occurred_at.FromDatetime(logged.at)
    seat = getattr(seen, "seat", None)
    if seat is not None:
        out.seat = seat
    getattr(out, field_name).CopyFrom(payload)
    return out
