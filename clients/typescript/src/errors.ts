// A refused call, typed by its ErrorInfo reason.
//
// Every refusal of the servers is a gRPC status with a `google.rpc.ErrorInfo`
// (domain "rummy.v1") whose `reason` says what happened, and a message that is
// a sentence for the player: show `message`, switch on `reason`, never parse
// the text. A refusal that may be made again as it is also carries a
// `google.rpc.RetryInfo` (`retryAfterMs`). An error with no ErrorInfo (the
// server out of reach, a stream cut) has the reason "".

import { Code, ConnectError } from "@connectrpc/connect";
import { errorInfoOf, retryDelayOf } from "./details.js";
import type { Reason } from "./reasons.js";

export { Code };

export const DOMAIN = "rummy.v1";

/** Refusals the SDK makes itself (never sent by a server; their domain is ""). */
export type ClientReason =
  /** The matchmaker ended the ticket without a table (it expired, or was
   * cancelled elsewhere): `metadata.ticket_id`; the message says why. */
  "TICKET_ENDED";

export class RummyError extends Error {
  override readonly name = "RummyError";
  /** The gRPC status code (Connect's `Code`: `Code.FailedPrecondition`...). */
  readonly code: Code;
  /** The ErrorInfo reason; "" when the error came with none. */
  readonly reason: Reason | ClientReason | (string & {});
  /** The ErrorInfo domain ("rummy.v1"), "" without an ErrorInfo. */
  readonly domain: string;
  /** The ErrorInfo metadata ("retry_after_ms", "table_id", "ticket_id"...). */
  readonly metadata: Readonly<Record<string, string>>;
  /** The wait the server asks for before the same call (RetryInfo, else the
   * older `retry_after_ms` metadata); undefined: the same call would only be
   * refused again. */
  readonly retryAfterMs: number | undefined;
  /** The error as Connect reported it. */
  override readonly cause: ConnectError;

  /** `own`: the SDK's own refusal (see `ClientReason`), else the server's ErrorInfo. */
  constructor(cause: ConnectError, own?: { reason: ClientReason; metadata?: Record<string, string> }) {
    super(cause.rawMessage);
    this.cause = cause;
    this.code = cause.code;
    const info = own ? { reason: own.reason, domain: "", metadata: own.metadata ?? {} } : errorInfoOf(cause);
    this.reason = info?.reason ?? "";
    this.domain = info?.domain ?? "";
    this.metadata = info?.metadata ?? {};
    this.retryAfterMs = retryDelayOf(cause) ?? metadataDelay(this.metadata);
  }

  /** Any thrown value as a RummyError (a RummyError as it is). */
  static from(error: unknown): RummyError {
    if (error instanceof RummyError) {
      return error;
    }
    return new RummyError(ConnectError.from(error));
  }

  /** This refusal has that reason: `if (e.is("NOT_YOUR_TURN")) ...`. */
  is(reason: Reason | ClientReason): boolean {
    return this.reason === reason;
  }

  /** Refused because the token is missing, expired or invalid: sign in again. */
  get signInNeeded(): boolean {
    return this.code === Code.Unauthenticated;
  }

  /** The move was refused against a table that changed since the view it was
   * made from (VERSION_STALE, or a race lost): fetch the view, decide again. */
  get stale(): boolean {
    return this.code === Code.Aborted;
  }

  override toString(): string {
    const why = this.reason ? `${this.reason}: ` : "";
    return `RummyError [${Code[this.code]}] ${why}${this.message}`;
  }
}

function metadataDelay(metadata: Record<string, string>): number | undefined {
  const raw = metadata["retry_after_ms"];
  if (raw === undefined) {
    return undefined;
  }
  const ms = Number.parseInt(raw, 10);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}
