"""The services' own reason codes: the `reason` of the ErrorInfo every refusal
carries (AIP-193), beside the engine's (`services.game.rules.Reason`). A code
never changes meaning; clients switch on it, never on the sentence."""

from __future__ import annotations

from enum import StrEnum


class ServiceReason(StrEnum):
    """Why a service refused a call, whatever the rules of the game say."""

    # Any call: the request, the server's load, the database.
    MALFORMED_REQUEST = "MALFORMED_REQUEST"
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"
    RATE_LIMITED = "RATE_LIMITED"
    """With ``retry_after_ms`` in the metadata: when to call again."""
    TOO_MANY_STREAMS = "TOO_MANY_STREAMS"
    SERVER_FULL = "SERVER_FULL"
    """With ``retry_after_ms`` in the metadata, as RATE_LIMITED."""
    SERVER_STOPPING = "SERVER_STOPPING"
    DATABASE_UNAVAILABLE = "DATABASE_UNAVAILABLE"
    CONFLICT = "CONFLICT"
    """Another change got there first: try again."""
    INTERNAL = "INTERNAL"

    # Signing in.
    TOKEN_MISSING = "TOKEN_MISSING"
    TOKEN_EXPIRED = "TOKEN_EXPIRED"
    TOKEN_INVALID = "TOKEN_INVALID"
    SERVICE_CREDENTIAL_REQUIRED = "SERVICE_CREDENTIAL_REQUIRED"
    PLAYER_CREDENTIAL_REQUIRED = "PLAYER_CREDENTIAL_REQUIRED"
    OPERATOR_CREDENTIAL_REQUIRED = "OPERATOR_CREDENTIAL_REQUIRED"
    DEVICE_ID_INVALID = "DEVICE_ID_INVALID"
    NAME_INVALID = "NAME_INVALID"

    # Tables (GameService).
    TABLE_ID_INVALID = "TABLE_ID_INVALID"
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    TABLE_EXISTS = "TABLE_EXISTS"
    TABLES_PER_CALL = "TABLES_PER_CALL"
    REQUEST_ID_INVALID = "REQUEST_ID_INVALID"
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    VERSION_STALE = "VERSION_STALE"
    RULESET_UNKNOWN = "RULESET_UNKNOWN"
    OPTIONS_INVALID = "OPTIONS_INVALID"
    SEATS_INVALID = "SEATS_INVALID"
    PLAYER_ID_INVALID = "PLAYER_ID_INVALID"
    PLAYER_NAME_INVALID = "PLAYER_NAME_INVALID"
    BOT_LEVEL_UNKNOWN = "BOT_LEVEL_UNKNOWN"
    TEST_DECK_REFUSED = "TEST_DECK_REFUSED"
    TOO_MANY_CARDS = "TOO_MANY_CARDS"
    SUIT_INVALID = "SUIT_INVALID"
    MELD_KIND_INVALID = "MELD_KIND_INVALID"
    SIDE_INVALID = "SIDE_INVALID"
    SEQ_AHEAD = "SEQ_AHEAD"
    """A Watch resumed after an event this table has not reached."""
    RESUME_REQUIRED = "RESUME_REQUIRED"
    """A Watch that fell too far behind: resume from the last event seen."""

    # Players (PlayerService).
    PLAYER_NOT_FOUND = "PLAYER_NOT_FOUND"
    GAME_NOT_FOUND = "GAME_NOT_FOUND"
    """No finished game has this id: none at all, or one still in play."""
    REPLAY_EXPIRED = "REPLAY_EXPIRED"
    """The game finished longer ago than event logs are kept."""
    PAGE_SIZE_INVALID = "PAGE_SIZE_INVALID"
    PAGE_TOKEN_INVALID = "PAGE_TOKEN_INVALID"

    # Matchmaking (MatchmakerService).
    TABLE_SIZE_INVALID = "TABLE_SIZE_INVALID"
    MATCH_MODE_INVALID = "MATCH_MODE_INVALID"
    """A way of matching (`MatchMode`) this build does not know."""
    WAIT_TOO_LONG = "WAIT_TOO_LONG"
    TICKET_ID_INVALID = "TICKET_ID_INVALID"
    TICKET_NOT_FOUND = "TICKET_NOT_FOUND"
    TICKET_EXISTS = "TICKET_EXISTS"
    """With ``ticket_id`` in the metadata: the player's live ticket."""
    TICKET_MATCHING = "TICKET_MATCHING"
    ALREADY_SEATED = "ALREADY_SEATED"
    """With ``table_id`` (and ``game_target``) in the metadata: the seat kept."""
    INVITE_NOT_FOUND = "INVITE_NOT_FOUND"
    INVITE_CODES_EXHAUSTED = "INVITE_CODES_EXHAUSTED"
    TABLE_FULL = "TABLE_FULL"

    # The admin services (rummy.admin.v1).
    ADMIN_REASON_INVALID = "ADMIN_REASON_INVALID"
    """The words an operator gives the players are empty, too long or not text."""
    FILTER_INVALID = "FILTER_INVALID"
    """A limit or an age out of range, or a state this build does not know."""
