"""Bot levels as the API carries them (`rummy.v1.BotLevel`), for the game service,
the matchmaker and the client alike."""

from __future__ import annotations

import grpc

from services.common.pb.rummy.v1 import table_pb2
from services.game.rules import BotLevel

from .reasons import ServiceReason
from .refusals import Refusal

_LEVELS: dict[int, BotLevel] = {
    table_pb2.BOT_LEVEL_EASY: BotLevel.EASY,
    table_pb2.BOT_LEVEL_NORMAL: BotLevel.NORMAL,
    table_pb2.BOT_LEVEL_STRONG: BotLevel.STRONG,
}
_MESSAGES = {
    BotLevel.EASY: table_pb2.BOT_LEVEL_EASY,
    BotLevel.NORMAL: table_pb2.BOT_LEVEL_NORMAL,
    BotLevel.STRONG: table_pb2.BOT_LEVEL_STRONG,
}


def level_asked(value: int) -> BotLevel | None:
    """The level a request asks for; None when it leaves it unspecified. A level
    this build does not know (a newer client's, or garbage) is refused."""
    if value == table_pb2.BOT_LEVEL_UNSPECIFIED:
        return None
    level = _LEVELS.get(value)
    if level is None:
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.BOT_LEVEL_UNKNOWN,
            "Bots play easy, normal or strong: choose one of these.",
        )
    return level


def level_message(level: BotLevel | None) -> table_pb2.BotLevel.ValueType:
    return table_pb2.BOT_LEVEL_UNSPECIFIED if level is None else _MESSAGES[level]
