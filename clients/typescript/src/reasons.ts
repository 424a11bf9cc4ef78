// Every `reason` a server puts in a refusal's ErrorInfo (domain "rummy.v1"),
// in the two catalogues docs/api/errors.md lists: the rules of the game's and
// the services' own. A reason never changes meaning: switch on it. A server
// newer than this package may send one not listed here: `RummyError.reason`
// is then that string as it is (`Reason | (string & {})`), so keep a default.
//
// Kept equal to the servers' catalogues by tests/sdk/test_typescript_reasons.py.

/** Refusals of the game's rules (a move against them). */
export const GAME_REASONS = [
  "NOT_YOUR_TURN",
  "NOT_SEATED",
  "SEAT_LEFT",
  "MUST_DRAW_FIRST",
  "ALREADY_DREW",
  "NO_ROUND_IN_PLAY",
  "GAME_OVER",
  "ROUND_IN_PLAY",
  "DECK_INVALID",
  "CARD_UNKNOWN",
  "CARD_NOT_IN_HAND",
  "CARD_DUPLICATED",
  "STOCK_EMPTY",
  "DISCARD_EMPTY",
  "DISCARD_UNUSABLE",
  "MELD_TOO_SHORT",
  "MELD_INVALID",
  "MELD_JOKER_LIMIT",
  "MELD_NOT_FOUND",
  "MELD_KIND_MISMATCH",
  "NOTHING_TO_MELD",
  "NOT_OPENED",
  "LAY_OFF_INVALID",
  "SWAP_INVALID",
  "SWAP_JOKER_NOT_PLACED",
  "MUST_KEEP_CARD",
  "JOKER_DISCARD_FORBIDDEN",
  "DISCARD_TAKEN_CARD",
  "TIMEOUT_NOT_DUE",
  "CLOCK_NOT_STOPPED",
  "ACTION_UNKNOWN",
  "OPENING_TOO_LOW",
  "TAKEN_CARD_UNUSED",
  "REPOSER_NOT_ALLOWED",
  "CONTRACT_UNMET",
  "CLAIM_NOT_ALLOWED",
  "CLAIM_CARD_CHANGED",
  "CLAIM_WINDOW_CLOSED",
  "LAY_OFF_AMBIGUOUS",
  "RULE_NOT_IN_PLAY",
] as const;

/** Refusals of the services: the request, sign-in, the load, tables, matchmaking. */
export const SERVICE_REASONS = [
  "MALFORMED_REQUEST",
  "REQUEST_TOO_LARGE",
  "RATE_LIMITED",
  "TOO_MANY_STREAMS",
  "SERVER_FULL",
  "SERVER_STOPPING",
  "DATABASE_UNAVAILABLE",
  "CONFLICT",
  "INTERNAL",
  "TOKEN_MISSING",
  "TOKEN_EXPIRED",
  "TOKEN_INVALID",
  "SERVICE_CREDENTIAL_REQUIRED",
  "PLAYER_CREDENTIAL_REQUIRED",
  "OPERATOR_CREDENTIAL_REQUIRED",
  "DEVICE_ID_INVALID",
  "NAME_INVALID",
  "TABLE_ID_INVALID",
  "TABLE_NOT_FOUND",
  "TABLE_EXISTS",
  "TABLES_PER_CALL",
  "REQUEST_ID_INVALID",
  "REQUEST_ID_REUSED",
  "VERSION_STALE",
  "RULESET_UNKNOWN",
  "OPTIONS_INVALID",
  "SEATS_INVALID",
  "PLAYER_ID_INVALID",
  "PLAYER_NAME_INVALID",
  "BOT_LEVEL_UNKNOWN",
  "TEST_DECK_REFUSED",
  "TOO_MANY_CARDS",
  "SUIT_INVALID",
  "MELD_KIND_INVALID",
  "SIDE_INVALID",
  "SEQ_AHEAD",
  "RESUME_REQUIRED",
  "PLAYER_NOT_FOUND",
  "GAME_NOT_FOUND",
  "REPLAY_EXPIRED",
  "PAGE_SIZE_INVALID",
  "PAGE_TOKEN_INVALID",
  "TABLE_SIZE_INVALID",
  "MATCH_MODE_INVALID",
  "WAIT_TOO_LONG",
  "TICKET_ID_INVALID",
  "TICKET_NOT_FOUND",
  "TICKET_EXISTS",
  "TICKET_MATCHING",
  "ALREADY_SEATED",
  "INVITE_NOT_FOUND",
  "INVITE_CODES_EXHAUSTED",
  "TABLE_FULL",
  "ADMIN_REASON_INVALID",
  "FILTER_INVALID",
] as const;

export type GameReason = (typeof GAME_REASONS)[number];
export type ServiceReason = (typeof SERVICE_REASONS)[number];
/** A reason a server of this API version may send. */
export type Reason = GameReason | ServiceReason;

const KNOWN: ReadonlySet<string> = new Set<string>([...GAME_REASONS, ...SERVICE_REASONS]);

/** Whether `reason` is one this package knows. */
export function isKnownReason(reason: string): reason is Reason {
  return KNOWN.has(reason);
}
