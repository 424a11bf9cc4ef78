// Which calls may be made again, and the loop that makes them again.
//
// A call is safe to repeat when repeating it cannot apply anything twice: the
// reads (GetTable, GetHint, GetTicket), and every action that carries a
// `request_id` (the server answers a repeat with its first answer, AIP-155).
// The SDK gives every action a fresh request id before its first attempt and
// sends that same request on every retry, so a retried action is applied
// once: safe by construction. These are exactly the calls the API's service
// config (proto/service_config.json) lets a gRPC stack retry.
//
// Other refusals are retried only where the server says nothing was done: a
// token refused (after signing in again), and a call turned away for its rate
// (RATE_LIMITED, SERVER_FULL: after the wait it names).

import type { DescMethod } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { RummyError } from "./errors.js";

/** Read-only calls: safe to repeat as they are. */
export const READS: ReadonlySet<string> = new Set([
  "rummy.v1.GameService/GetTable",
  "rummy.v1.GameService/GetHint",
  "rummy.v1.MatchmakerService/GetTicket",
  "rummy.v1.PlayerService/GetProfile",
  "rummy.v1.PlayerService/ListGames",
  "rummy.v1.PlayerService/GetReplay",
  "rummy.v1.PlayerService/GetLeaderboard",
]);

/** "rummy.v1.GameService/GetTable" */
export function methodPath(method: DescMethod): string {
  return `${method.parent.typeName}/${method.name}`;
}

/** The method's request has a `request_id` (it is an idempotent action). */
export function takesRequestId(method: DescMethod): boolean {
  return method.input.fields.some((field) => field.name === "request_id");
}

/** The unary calls of these services that are safe to repeat (given a request
 * id for the actions), as "package.Service/Method". */
export function repeatableMethods(services: readonly { methods: readonly DescMethod[] }[]): string[] {
  return services
    .flatMap((service) => service.methods)
    .filter((method) => method.methodKind === "unary")
    .filter((method) => READS.has(methodPath(method)) || takesRequestId(method))
    .map(methodPath);
}

/** This request to this method may be sent again without being applied twice. */
export function safeToRepeat(method: DescMethod, request: object): boolean {
  if (READS.has(methodPath(method))) {
    return true;
  }
  const id = (request as { requestId?: unknown }).requestId;
  return takesRequestId(method) && typeof id === "string" && id !== "";
}

export interface RetryOptions {
  /** How long an outage is retried before its error is thrown (60 s). */
  giveUpAfterMs?: number;
  /** First wait between attempts (200 ms), doubled each time up to `maxBackoffMs` (5 s). */
  firstBackoffMs?: number;
  maxBackoffMs?: number;
  /** Bounds one attempt of a unary call (10 s); a retry gets a fresh deadline. */
  callTimeoutMs?: number;
  /** Told once when a server stops answering ("lost", with the error) and
   * once when it answers again ("back"): say "Reconnecting…" meanwhile. */
  onConnection?: (state: "lost" | "back", error?: RummyError) => void;
}

export const DEFAULT_RETRY: Required<Omit<RetryOptions, "onConnection">> = {
  giveUpAfterMs: 60_000,
  firstBackoffMs: 200,
  maxBackoffMs: 5_000,
  callTimeoutMs: 10_000,
};

/** The least a rate-limited call waits before it is made again. */
const MIN_RATE_WAIT_MS = 50;

/** Transport failures: no answer came (or only a cut connection). */
export function isOutage(error: RummyError): boolean {
  switch (error.code) {
    case Code.Unavailable:
    case Code.DeadlineExceeded:
    case Code.Canceled: // a server going away cancels the calls it holds
      return true;
    case Code.Internal:
    case Code.Unknown:
      // A connection cut mid-call. The server's own faults carry a reason.
      return error.reason === "";
    default:
      return false;
  }
}

/** Turned away at the door, told when to come back: nothing was done. */
export function isRateLimited(error: RummyError): boolean {
  return (
    error.code === Code.ResourceExhausted &&
    (error.reason === "RATE_LIMITED" || error.reason === "SERVER_FULL")
  );
}

/** Exponential waits with jitter. */
export class Backoff {
  private tries = 0;
  constructor(
    private readonly firstMs: number,
    private readonly maxMs: number,
  ) {}

  next(): number {
    const delay = Math.min(this.maxMs, this.firstMs * 2 ** this.tries);
    this.tries += 1;
    return delay * (0.7 + Math.random() * 0.6);
  }

  reset(): void {
    this.tries = 0;
  }
}

/** How long to wait before making this call again, or undefined: not again. */
export function retryWait(error: RummyError, safe: boolean, backoff: Backoff): number | undefined {
  if (isRateLimited(error)) {
    return Math.max(MIN_RATE_WAIT_MS, error.retryAfterMs ?? 0) * (1 + Math.random() * 0.25);
  }
  if (!safe) {
    return undefined;
  }
  if (isOutage(error) || error.retryAfterMs !== undefined) {
    return Math.max(error.retryAfterMs ?? 0, backoff.next());
  }
  return undefined;
}

/** Sleeps `ms`, or until `signal` aborts (then throws its reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const done = () => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** What a retry loop needs of the session: its token, and a new one. */
export interface Renewer {
  readonly token: string;
  signInAgain(stale: string): Promise<void>;
}

/**
 * Runs `attempt` until it answers, making it again when that is safe (see the
 * top of this file). A refused token is renewed first (a new sign-in shared by
 * every call refused with it). Throws the last error once retrying cannot
 * help, or once an outage has lasted `giveUpAfterMs`.
 */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  context: { safe: boolean; session: Renewer; options: RetryOptions; signal?: AbortSignal },
): Promise<T> {
  const options = { ...DEFAULT_RETRY, ...context.options };
  const backoff = new Backoff(options.firstBackoffMs, options.maxBackoffMs);
  const started = performance.now();
  let renewed = false;
  let lost = false;
  for (;;) {
    const used = context.session.token;
    let error: RummyError;
    try {
      const answer = await attempt();
      if (lost) {
        options.onConnection?.("back");
      }
      return answer;
    } catch (thrown) {
      error = RummyError.from(thrown);
    }
    if (context.signal?.aborted) {
      throw error;
    }
    const elapsed = performance.now() - started;
    if (error.code === Code.Unauthenticated) {
      // TOKEN_EXPIRED, TOKEN_INVALID (TOKEN_MISSING: not signed in yet):
      // refused before anything was done. A token refused even fresh is
      // renewed again after a pause, for a while.
      if (renewed) {
        if (elapsed > options.giveUpAfterMs) {
          throw error;
        }
        await sleep(backoff.next(), context.signal);
      }
      renewed = true;
      try {
        await context.session.signInAgain(used);
      } catch (signInError) {
        const refused = RummyError.from(signInError);
        if (!isOutage(refused) || elapsed > options.giveUpAfterMs) {
          throw refused;
        }
        await sleep(backoff.next(), context.signal);
      }
      continue;
    }
    const wait = retryWait(error, context.safe, backoff);
    if (wait === undefined || elapsed + wait > options.giveUpAfterMs) {
      throw error;
    }
    if (!lost && isOutage(error)) {
      lost = true;
      options.onConnection?.("lost", error);
    }
    await sleep(wait, context.signal);
  }
}
