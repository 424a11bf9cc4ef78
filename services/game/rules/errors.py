"""Typed refusals: a stable reason code and a sentence a player understands."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Stable reason codes; clients switch on these, never on the message."""

    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    NOT_SEATED = "NOT_SEATED"
    SEAT_LEFT = "SEAT_LEFT"
    MUST_DRAW_FIRST = "MUST_DRAW_FIRST"
    ALREADY_DREW = "ALREADY_DREW"
    NO_ROUND_IN_PLAY = "NO_ROUND_IN_PLAY"
    GAME_OVER = "GAME_OVER"
    ROUND_IN_PLAY = "ROUND_IN_PLAY"
    DECK_INVALID = "DECK_INVALID"
    CARD_UNKNOWN = "CARD_UNKNOWN"
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    CARD_DUPLICATED = "CARD_DUPLICATED"
    STOCK_EMPTY = "STOCK_EMPTY"
    DISCARD_EMPTY = "DISCARD_EMPTY"
    DISCARD_UNUSABLE = "DISCARD_UNUSABLE"
    MELD_TOO_SHORT = "MELD_TOO_SHORT"
    MELD_INVALID = "MELD_INVALID"
    MELD_JOKER_LIMIT = "MELD_JOKER_LIMIT"
    MELD_NOT_FOUND = "MELD_NOT_FOUND"
    MELD_KIND_MISMATCH = "MELD_KIND_MISMATCH"
    NOTHING_TO_MELD = "NOTHING_TO_MELD"
    NOT_OPENED = "NOT_OPENED"
    LAY_OFF_INVALID = "LAY_OFF_INVALID"
    SWAP_INVALID = "SWAP_INVALID"
    SWAP_JOKER_NOT_PLACED = "SWAP_JOKER_NOT_PLACED"
    MUST_KEEP_CARD = "MUST_KEEP_CARD"
    JOKER_DISCARD_FORBIDDEN = "JOKER_DISCARD_FORBIDDEN"
    DISCARD_TAKEN_CARD = "DISCARD_TAKEN_CARD"
    TIMEOUT_NOT_DUE = "TIMEOUT_NOT_DUE"
    CLOCK_NOT_STOPPED = "CLOCK_NOT_STOPPED"
    ACTION_UNKNOWN = "ACTION_UNKNOWN"
    OPENING_TOO_LOW = "OPENING_TOO_LOW"
    TAKEN_CARD_UNUSED = "TAKEN_CARD_UNUSED"
    REPOSER_NOT_ALLOWED = "REPOSER_NOT_ALLOWED"
    CONTRACT_UNMET = "CONTRACT_UNMET"
    CLAIM_NOT_ALLOWED = "CLAIM_NOT_ALLOWED"
    CLAIM_CARD_CHANGED = "CLAIM_CARD_CHANGED"
    CLAIM_WINDOW_CLOSED = "CLAIM_WINDOW_CLOSED"
    LAY_OFF_AMBIGUOUS = "LAY_OFF_AMBIGUOUS"
    RULE_NOT_IN_PLAY = "RULE_NOT_IN_PLAY"


class RuleError(Exception):
    """A refused action. The state it was applied to is unchanged."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message

    def __repr__(self) -> str:
        return f"RuleError({self.reason.value}, {self.message!r})"
