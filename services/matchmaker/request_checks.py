"""What a request may ask for, checked: each refusal with its reason code and a
sentence a player understands."""

from __future__ import annotations

import dataclasses
from typing import Any

import grpc

from services.common.pb.rummy.v1 import matchmaker_pb2 as mm
from services.common.pb.rummy.v1 import table_pb2
from services.common.wire import options as table_options
from services.common.wire.bot_levels import level_asked
from services.common.wire.reasons import ServiceReason
from services.common.wire.refusals import Refusal
from services.game.rules import PRESETS, QUICK_MATCH_SIZES, BotLevel, Ruleset, preset

_EFFECTIVE: dict[tuple[str, bytes], dict[str, Any]] = {}
"""Options asked for, read: players of one queue nearly all ask the same."""
_EFFECTIVE_KEPT = 1024


def effective_options(ruleset: str, message: table_pb2.TableOptions) -> dict[str, Any]:
    """The rule set's defaults filled in, so equal tables compare equal: the queue
    key. Remembered (the answer is shared: never change it)."""
    key = (ruleset, message.SerializeToString(deterministic=True))
    known = _EFFECTIVE.get(key)
    if known is not None:
        return known
    try:
        options = table_options.effective(preset(ruleset), message)
    except ValueError as error:
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT, ServiceReason.OPTIONS_INVALID, str(error)
        ) from None
    known = dataclasses.asdict(options)
    if len(_EFFECTIVE) < _EFFECTIVE_KEPT:
        _EFFECTIVE[key] = known
    return known


def table_wanted(
    request: mm.EnqueueRequest | mm.CreatePrivateTableRequest,
) -> tuple[str, dict[str, Any]]:
    """The rule set and effective options a queueing request asks for, checked."""
    ruleset = request.ruleset or "cafe"
    if ruleset not in PRESETS:
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.RULESET_UNKNOWN,
            f"There is no rule set called '{ruleset}'.",
        )
    _check_size(request, PRESETS[ruleset])
    return ruleset, effective_options(ruleset, request.options)


_MODES: dict[int, str] = {
    mm.MATCH_MODE_UNSPECIFIED: "fifo",
    mm.MATCH_MODE_FIFO: "fifo",
    mm.MATCH_MODE_RATING: "rating",
}


def match_mode_wanted(value: int) -> str:
    """How a queueing request asks its players to be picked, checked: unspecified is
    first come, first served. A mode this build does not know (a newer client's, or
    garbage) is refused, never read as the default."""
    mode = _MODES.get(value)
    if mode is None:
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.MATCH_MODE_INVALID,
            "Players are matched first come, first served or by rating: choose one of these.",
        )
    return mode


def bot_level_wanted(value: int) -> BotLevel:
    """The level of the bots a queueing request asks for, checked: unspecified is
    normal (a person's table)."""
    return level_asked(value) or BotLevel.NORMAL


def _check_size(request: mm.EnqueueRequest | mm.CreatePrivateTableRequest, rules: Ruleset) -> None:
    """Quick-match queues seat 2, 3 or 4; a private table up to the rule set's most
    (`classic`, `contract`: 6)."""
    size = request.table_size
    private = isinstance(request, mm.CreatePrivateTableRequest)
    if size in QUICK_MATCH_SIZES or (private and 2 <= size <= rules.max_players):
        return
    larger = [r.name for r in PRESETS.values() if r.max_players > max(QUICK_MATCH_SIZES)]
    most = max(r.max_players for r in PRESETS.values())
    if private and rules.max_players < size <= most:
        # A size this rule set does not seat but another does: say which do.
        sentence = (
            f"A {rules.name} table seats 2, 3 or 4 players; only "
            + " and ".join(larger)
            + f" private tables seat up to {most}."
        )
    elif private:
        sentence = f"A private table seats 2 to {rules.max_players} players in {rules.name}."
    elif 4 < size <= most:
        sentence = (
            "Quick-match queues seat 2, 3 or 4 players; tables of 5 or 6 are private"
            " (" + " and ".join(larger) + ")."
        )
    else:
        sentence = "A table seats 2, 3 or 4 players."
    raise Refusal(grpc.StatusCode.INVALID_ARGUMENT, ServiceReason.TABLE_SIZE_INVALID, sentence)


def invite_not_found() -> Refusal:
    return Refusal(
        grpc.StatusCode.NOT_FOUND,
        ServiceReason.INVITE_NOT_FOUND,
        "No private table is waiting with that code.",
    )


def table_full() -> Refusal:
    return Refusal(
        grpc.StatusCode.FAILED_PRECONDITION,
        ServiceReason.TABLE_FULL,
        "That table is already full.",
    )


_WAITS = {
    "fill_with_bots_after_ms": "the wait before bots take the empty seats",
    "accept_smaller_after_ms": "the wait before a smaller table will do",
}
"""The waits a request may ask for, as a player reads them."""


def wait_wanted(field: str, wait_ms: int, *, ttl_s: float) -> int:
    """A wait ``field`` asks for, checked: a ticket expires after ``ttl_s``, so a
    wait as long would never end (0, never, is always fine)."""
    lifetime_ms = round(ttl_s * 1000)
    if wait_ms >= lifetime_ms:
        raise Refusal(
            grpc.StatusCode.INVALID_ARGUMENT,
            ServiceReason.WAIT_TOO_LONG,
            f"A ticket waits at most {ttl_s:g} seconds in the queue:"
            f" {_WAITS[field]} must be shorter than that.",
            {"field": field, "ticket_lifetime_ms": str(lifetime_ms)},
        )
    return wait_ms
