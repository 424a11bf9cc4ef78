"""Bot levels as the API carries them (`rummy.v1.BotLevel`), for the game service
and the matchmaker alike."""

from __future__ import annotations

from services.common.pb.rummy.v1 import table_pb2

from .rules.levels import BotLevel

UNKNOWN_REASON = "BOT_LEVEL_UNKNOWN"
UNKNOWN_MESSAGE = "Bots play easy, normal or strong: choose one of these."
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


class UnknownBotLevel(ValueError):
    """A level this build does not know (a newer client's, or garbage)."""


def level_asked(value: int) -> BotLevel | None:
    """The level a request asks for; None when it leaves it unspecified."""
    if value == table_pb2.BOT_LEVEL_UNSPECIFIED:
        return None
    level = _LEVELS.get(value)
    if level is None:
        raise UnknownBotLevel(value)
    return level


def level_message(level: BotLevel | None) -> table_pb2.BotLevel.ValueType:
    return table_pb2.BOT_LEVEL_UNSPECIFIED if level is None else _MESSAGES[level]
