// A table's Watch stream, followed across disconnects.
//
// Each event has a `seq`: 1, 2, 3... with no gap. The watch keeps the last one
// it delivered and, whenever the stream ends early (the server restarting or
// going away, the network, an expired token), opens it again with
// `after_seq` = that seq, on whichever replica answers: every event is
// delivered once, in order. A duplicate is dropped and a gap is never
// delivered (the stream is opened again from the last seq instead).
//
// The stream ends by itself after GameEnded. An outage is given up (its error
// thrown) once no stream has been healthy for `giveUpAfterMs`.

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import type { Calls } from "./calls.js";
import { RummyError } from "./errors.js";
import { GameService, GetTableRequestSchema, WatchRequestSchema } from "./gen/rummy/v1/game_pb.js";
import type { TableEvent, TableView } from "./gen/rummy/v1/table_pb.js";
import { Backoff, DEFAULT_RETRY, isOutage, isRateLimited, sleep } from "./retries.js";

/** What a watch delivers: the next event, or (rarely) a whole view to start
 * again from, when the position asked for is ahead of the table's log. */
export type WatchItem = { kind: "event"; event: TableEvent } | { kind: "view"; view: TableView };

/** A stream open this long is healthy even if the table stayed quiet: a
 * failure after that starts a new outage, with a clock of its own. */
export const SETTLED_MS = 10_000;

/** Reasons a stream may end that opening it again can mend. */
function reopenable(error: RummyError): boolean {
  return isOutage(error) || error.code === Code.DataLoss || error.reason === "RESUME_REQUIRED";
}

export class TableWatch implements AsyncIterable<WatchItem> {
  private readonly abort = new AbortController();
  private seq: bigint;
  private opens = 0;

  constructor(
    private readonly calls: Calls,
    private readonly transport: Transport,
    readonly tableId: string,
    afterSeq: bigint,
    signal?: AbortSignal,
  ) {
    this.seq = afterSeq;
    signal?.addEventListener("abort", () => this.close(), { once: true });
  }

  /** The seq of the last event delivered (where a new watch would resume). */
  get lastSeq(): bigint {
    return this.seq;
  }

  /** Times the stream was opened again after it ended early. */
  get reconnects(): number {
    return Math.max(0, this.opens - 1);
  }

  /** Stops following the table (a `for await` loop then ends). */
  close(): void {
    this.abort.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchItem> {
    return this.follow();
  }

  private async *follow(): AsyncGenerator<WatchItem, void, undefined> {
    const options = { ...DEFAULT_RETRY, ...this.calls.retry };
    const session = this.calls.session;
    const game = createClient(GameService, this.transport);
    const backoff = new Backoff(options.firstBackoffMs, options.maxBackoffMs);
    const signal = this.abort.signal;
    let lostAt: number | undefined;
    let relogged = false;
    const back = () => {
      if (lostAt !== undefined) {
        lostAt = undefined;
        options.onConnection?.("back");
      }
      relogged = false;
      backoff.reset();
    };
    try {
      for (;;) {
        const openedWith = session.token;
        const openedAt = performance.now();
        const settled = setTimeout(back, SETTLED_MS);
        this.opens += 1;
        let error: RummyError;
        try {
          const request = create(WatchRequestSchema, { tableId: this.tableId, afterSeq: this.seq });
          const stream = game.watch(request, { headers: session.headers(), signal });
          for await (const reply of stream) {
            const event = reply.event;
            if (event === undefined || event.seq <= this.seq) {
              continue; // never delivered twice
            }
            if (event.seq !== this.seq + 1n) {
              throw new ConnectError(`event ${event.seq} came after ${this.seq}`, Code.DataLoss);
            }
            this.seq = event.seq;
            back();
            yield { kind: "event", event };
          }
          return; // ended OK: the game is over
        } catch (thrown) {
          error = RummyError.from(thrown);
        } finally {
          clearTimeout(settled);
        }
        if (signal.aborted) {
          return;
        }
        if (performance.now() - openedAt >= SETTLED_MS) {
          lostAt = undefined; // that stream was healthy: a new outage
        }
        if (error.code === Code.OutOfRange && error.reason === "SEQ_AHEAD") {
          const view = await this.snapshot();
          this.seq = view.lastSeq;
          yield { kind: "view", view };
          continue;
        }
        if (error.code === Code.Unauthenticated) {
          // TOKEN_EXPIRED (checked before each event) or TOKEN_INVALID: a new
          // token, then the stream again from the same seq.
          if (relogged) {
            this.outage(error, lostAt, options.giveUpAfterMs);
            lostAt ??= performance.now();
            await sleep(backoff.next(), signal);
          }
          relogged = true;
          try {
            await session.signInAgain(openedWith);
          } catch (thrown) {
            const refused = RummyError.from(thrown);
            if (!isOutage(refused)) {
              throw refused;
            }
            this.outage(refused, lostAt, options.giveUpAfterMs);
            lostAt ??= performance.now();
            await sleep(backoff.next(), signal);
          }
          continue;
        }
        if (isRateLimited(error)) {
          await sleep(error.retryAfterMs ?? backoff.next(), signal);
          continue;
        }
        if (!reopenable(error)) {
          throw error;
        }
        this.outage(error, lostAt, options.giveUpAfterMs);
        if (lostAt === undefined) {
          lostAt = performance.now();
          options.onConnection?.("lost", error);
        }
        await sleep(Math.max(backoff.next(), error.retryAfterMs ?? 0), signal);
      }
    } catch (thrown) {
      if (signal.aborted) {
        return;
      }
      throw thrown;
    } finally {
      this.abort.abort();
    }
  }

  /** Throws `error` once the outage begun at `lostAt` has lasted too long. */
  private outage(error: RummyError, lostAt: number | undefined, giveUpAfterMs: number): void {
    if (lostAt !== undefined && performance.now() - lostAt > giveUpAfterMs) {
      throw error;
    }
  }

  private async snapshot(): Promise<TableView> {
    const request = create(GetTableRequestSchema, { tableId: this.tableId });
    const method = GameService.method.getTable;
    const reply = await this.calls.unary(this.transport, method, request, this.abort.signal);
    if (reply.view === undefined) {
      throw new Error("GetTable answered no view");
    }
    return reply.view;
  }
}
