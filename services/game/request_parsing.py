"""GameService requests read into table ids, seats and the engine's actions, and
what a request asked, kept with its request id (`request_digest`). A request the
game cannot read is refused (`Malformed`, INVALID_ARGUMENT) before any table is
touched."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

import grpc
from google.protobuf.message import Message

from services.common.auth_servicer import MAX_NAME
from services.common.pb.rummy.internal.v1 import tables_pb2
from services.common.pb.rummy.v1 import game_pb2, table_pb2
from services.common.wire.bot_levels import level_asked
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal

from .records import SeatPlayer
from .rules import actions as act
from .rules.cards import SUITS
from .rules.errors import Reason
from .rules.levels import BotLevel
from .rules.melds import MeldKind, Side

MAX_REQUEST_ID = 64
MAX_PLAYER_ID = 128
MAX_CARDS = 32
"""No hand or meld ever holds more: anything longer is malformed, not a move."""
_SIDES = {
    game_pb2.SIDE_UNSPECIFIED: Side.AUTO,
    game_pb2.SIDE_LOW: Side.LOW,
    game_pb2.SIDE_HIGH: Side.HIGH,
}
_KINDS = {
    table_pb2.MELD_KIND_UNSPECIFIED: None,
    table_pb2.MELD_KIND_GROUP: MeldKind.GROUP,
    table_pb2.MELD_KIND_RUN: MeldKind.RUN,
}


class Malformed(Refusal):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(grpc.StatusCode.INVALID_ARGUMENT, reason, message)


def table_id_of(text: str) -> uuid.UUID:
    try:
        return uuid.UUID(text)
    except ValueError:
        raise Malformed(ServiceReason.TABLE_ID_INVALID, "That is not a table id.") from None


def check_request_id(request_id: str) -> None:
    if len(request_id) > MAX_REQUEST_ID or not request_id.isprintable():
        raise Malformed(
            ServiceReason.REQUEST_ID_INVALID,
            "The request id must be at most 64 printable characters.",
        )


def request_digest(request: Message) -> bytes:
    """What a request asked, but its id: the same id must always ask the same, with
    the same call (two calls' requests can hold the same bytes)."""
    asked = type(request)()
    asked.CopyFrom(request)
    asked.ClearField("request_id")
    digest = hashlib.blake2b(request.DESCRIPTOR.full_name.encode(), digest_size=16)
    digest.update(b"\0")
    digest.update(asked.SerializeToString(deterministic=True))
    return digest.digest()


def seat_players(seated: Iterable[tables_pb2.SeatedPlayer]) -> list[SeatPlayer]:
    """The players of a new table, in seat order."""
    players = [SeatPlayer(p.player_id, p.display_name, p.is_bot) for p in seated]
    if any(not p.player_id or len(p.player_id) > MAX_PLAYER_ID for p in players):
        raise Malformed(ServiceReason.PLAYER_ID_INVALID, "Every seat needs a player id.")
    if any(len(p.display_name) > MAX_NAME for p in players):
        raise Malformed(
            ServiceReason.PLAYER_NAME_INVALID, f"A player's name is at most {MAX_NAME} characters."
        )
    if not all(p.player_id.isprintable() and p.display_name.isprintable() for p in players):
        raise Malformed(
            ServiceReason.PLAYER_ID_INVALID, "Player ids and names hold printable text only."
        )
    return players


def bot_level_of(value: int, players: Sequence[SeatPlayer]) -> BotLevel:
    """The level a new table's bots play at: as asked, or normal where a person
    plays and strong at a table of bots alone (as bots played before levels)."""
    level = level_asked(value)
    if level is not None:
        return level
    return BotLevel.NORMAL if any(not p.is_bot for p in players) else BotLevel.STRONG


def _ids(values: Any) -> tuple[int, ...]:
    ids = tuple(int(v) for v in values)
    if len(ids) > MAX_CARDS:
        raise Malformed(ServiceReason.TOO_MANY_CARDS, "Too many cards in one request.")
    return ids


def meld_spec(spec: game_pb2.MeldSpec) -> act.MeldSpec:
    suits = tuple((js.card_id, js.suit - 1) for js in spec.joker_suits)
    if any(not 0 <= s < len(SUITS) for _, s in suits):
        raise Malformed(ServiceReason.SUIT_INVALID, "Name a suit for the joker, or none.")
    if spec.kind not in _KINDS:
        raise Malformed(
            ServiceReason.MELD_KIND_INVALID, "Name the meld a group or a run, or neither."
        )
    return act.MeldSpec(_ids(spec.card_ids), suits, _KINDS[spec.kind])


def meld_of(request: game_pb2.MeldRequest) -> act.Meld:
    return act.Meld(tuple(meld_spec(m) for m in request.melds))


def lay_off_of(placement: game_pb2.LayOffRequest | game_pb2.LayOffPlacement) -> act.LayOff:
    side = _SIDES.get(placement.side)
    if side is None:
        raise Malformed(
            ServiceReason.SIDE_INVALID, "Lay the cards at the low end, the high end, or either."
        )
    return act.LayOff(placement.meld_id, _ids(placement.card_ids), side)


def swap_joker_of(request: game_pb2.SwapJokerRequest) -> act.SwapJoker:
    put_in = _ids(request.replacement_card_ids)
    if not 1 <= len(put_in) <= 2:
        raise Malformed(
            Reason.SWAP_INVALID,
            "Name the card that takes the joker's place (both missing cards of a brelan"
            " in classic).",
        )
    new_meld = meld_spec(request.new_meld) if request.HasField("new_meld") else None
    placed = lay_off_of(request.lay_off) if request.HasField("lay_off") else None
    return act.SwapJoker(
        request.meld_id,
        request.joker_card_id,
        put_in[0],
        new_meld,
        placed,
        second=put_in[1] if len(put_in) == 2 else -1,
    )
