"""Engine events as rows of the append-only `table_events` log.

The log keeps every event whole (hidden cards included) so any replica can
replay it; only `Event.visible_to` decides what a viewer is sent.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from .rules import events as ev
from .rules.melds import MeldKind, TableMeld

_KINDS: dict[str, type[ev.Event]] = {
    cls.__name__: cls
    for cls in (
        ev.RoundDealt,
        ev.TurnBegan,
        ev.Drew,
        ev.Reshuffled,
        ev.Melded,
        ev.LaidOff,
        ev.JokerSwapped,
        ev.Discarded,
        ev.TurnPassed,
        ev.TurnResumed,
        ev.PlayerLeft,
        ev.PlayerConnection,
        ev.PlayerEliminated,
        ev.BoughtBack,
        ev.RoundEnded,
        ev.GameEnded,
        ev.Reposed,
        ev.ClaimWindowOpened,
        ev.ClaimMade,
        ev.ClaimWindowClosed,
        ev.Claimed,
        ev.CardAnnounced,
        ev.DeckRevealed,
    )
}
_FIELDS = {cls: frozenset(f.name for f in dataclasses.fields(cls)) for cls in _KINDS.values()}


def kind_of(event: ev.Event) -> str:
    return type(event).__name__


def eliminated(events: list[ev.Event]) -> list[int]:
    """The seats these events put out of the game: their players leave the table."""
    return [e.seat for e in events if isinstance(e, ev.PlayerEliminated)]


def _out(value: Any) -> Any:
    if isinstance(value, TableMeld):
        return {
            "meld": [
                value.id,
                value.owner,
                int(value.kind),
                list(value.cards),
                value.rank,
                value.suit,
                [list(js) for js in value.joker_suits],
            ]
        }
    if isinstance(value, tuple | list):
        return [_out(v) for v in value]
    if isinstance(value, ev.EndReason):
        return value.value
    return value


def _in(value: Any) -> Any:
    if isinstance(value, dict) and "meld" in value:
        m = value["meld"]
        return TableMeld(
            m[0], m[1], MeldKind(m[2]), tuple(m[3]), m[4], m[5], tuple((j, s) for j, s in m[6])
        )
    if isinstance(value, list):
        return tuple(_in(v) for v in value)
    return value


def encode(event: ev.Event) -> bytes:
    fields = {f.name: _out(getattr(event, f.name)) for f in dataclasses.fields(event)}
    return orjson.dumps(fields)


def decode(kind: str, payload: bytes) -> ev.Event:
    cls = _KINDS[kind]
    known = _FIELDS[cls]
    # A field this build does not know (logged by a newer replica, mid-upgrade) is
    # left out: events gain fields with defaults, so older readers lose only news.
    fields = {name: _in(value) for name, value in orjson.loads(payload).items() if name in known}
    if cls in (ev.RoundEnded, ev.GameEnded):
        fields["reason"] = ev.EndReason(fields["reason"])
    return cls(**fields)
