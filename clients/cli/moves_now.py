"""The moves open to the viewer now, as the keys that make them.

The list comes from the engine's own moves (`move_kinds`), asked of the state this
seat can see (`viewstate`), so the client offers what the server would accept and
nothing else. A meld is offered when the hand can lay one the engine takes now,
alone or (an opening of several) together.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules import (
    Action,
    Claim,
    Discard,
    DrawStock,
    LayOff,
    Meld,
    Reposer,
    SwapJoker,
    TakeDiscard,
    move_kinds,
)

from .viewstate import state_from_view


@dataclass(frozen=True, slots=True)
class Choice:
    """One kind of move, the key that makes it, and the word for it."""

    key: str
    label: str


DRAW = Choice("d", "draw")
TAKE = Choice("t", "take")
REPOSER = Choice("r", "put back")
MELD = Choice("m", "meld")
LAY_OFF = Choice("l", "lay off")
SWAP = Choice("s", "swap joker")
DISCARD = Choice("x", "discard")
CLAIM = Choice("c", "claim")
ORDER = (DRAW, TAKE, REPOSER, MELD, LAY_OFF, SWAP, DISCARD, CLAIM)
"""The order the moves are listed in: the order of a turn."""

_KIND: dict[type[Action], Choice] = {
    DrawStock: DRAW,
    TakeDiscard: TAKE,
    Reposer: REPOSER,
    Meld: MELD,
    LayOff: LAY_OFF,
    SwapJoker: SWAP,
    Discard: DISCARD,
    Claim: CLAIM,
}

_CACHE: dict[tuple[object, ...], tuple[Choice, ...]] = {}
"""The last view's answer: the screen asks again at every redraw."""


def _key(view: table_pb2.TableView) -> tuple[object, ...]:
    window = view.claim_window.card.id if view.HasField("claim_window") else -1
    claimed = view.claim_window.claimed_by_me if view.HasField("claim_window") else False
    shown = (view.table_id, view.version, view.phase, view.current_seat, view.discard_put_back)
    return (*shown, window, claimed, *(c.id for c in view.hand))


def choices(view: table_pb2.TableView) -> tuple[Choice, ...]:
    """The kinds of move the viewer may make now, in turn order (none for a
    spectator, between rounds, or once the game is over)."""
    if not view.HasField("my_seat") or not view.seats:
        return ()
    key = _key(view)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = _choices(view)
    return _CACHE[key]


def _choices(view: table_pb2.TableView) -> tuple[Choice, ...]:
    found = {_KIND[k] for k in move_kinds(state_from_view(view), view.my_seat) if k in _KIND}
    return tuple(c for c in ORDER if c in found)
