// The turn's countdown, from the server's clock.
//
// A phone's clock may be minutes off; the server's is the one that times the
// turn out. Every TableView carries `server_time` (when the view was built)
// and `turn_deadline`, so the time left is `turn_deadline - server_time` at
// the moment the view arrived, less the time elapsed here since, measured on
// a monotonic clock (never the wall clock, which the user or the network may
// set back and forth). TurnStarted and TurnResumed events bring a new
// deadline, read against the same server clock.

import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { EventKind, Phase, type TableEvent, type TableView } from "./gen/rummy/v1/table_pb.js";

/** A monotonic clock in milliseconds (performance.now by default). */
export type Monotonic = () => number;

const monotonic: Monotonic = () => performance.now();

/** The server's clock as seen from here. */
export class ServerClock {
  private serverMs: number | undefined;
  private localMs = 0;

  constructor(private readonly now: Monotonic = monotonic) {}

  /** Takes the view's `server_time` as the server's time now. */
  sync(view: TableView): void {
    if (view.serverTime !== undefined) {
      this.serverMs = timestampMs(view.serverTime);
      this.localMs = this.now();
    }
  }

  /** Whether a view with a server time was seen. */
  get synced(): boolean {
    return this.serverMs !== undefined;
  }

  /** The server's time now (ms since the epoch), or undefined before `sync`. */
  serverNowMs(): number | undefined {
    if (this.serverMs === undefined) {
      return undefined;
    }
    return this.serverMs + (this.now() - this.localMs);
  }

  /** Milliseconds until a server instant (0 once it is past), or undefined before `sync`. */
  untilMs(instant: Timestamp): number | undefined {
    const now = this.serverNowMs();
    return now === undefined ? undefined : Math.max(0, timestampMs(instant) - now);
  }
}

/** Phases in which a turn's clock runs. */
const TIMED = new Set([Phase.DRAW, Phase.PLAY, Phase.CLAIM]);

/**
 * The current turn's countdown: give it every view (`update`) and every event
 * (`see`); ask it `remainingMs()` or `seconds()` as often as the screen redraws.
 */
export class TurnCountdown {
  readonly clock: ServerClock;
  private deadline: Timestamp | undefined;
  /** The seat whose turn the countdown times; undefined when no turn runs. */
  seat: number | undefined;

  constructor(now: Monotonic = monotonic) {
    this.clock = new ServerClock(now);
  }

  static fromView(view: TableView, now?: Monotonic): TurnCountdown {
    const countdown = new TurnCountdown(now);
    countdown.update(view);
    return countdown;
  }

  /** A fresh view: the server's clock, and the turn's deadline (none between
   * rounds or once the game is over). */
  update(view: TableView): void {
    this.clock.sync(view);
    const running = TIMED.has(view.phase) && view.turnDeadline !== undefined;
    this.deadline = running ? view.turnDeadline : undefined;
    this.seat = running ? view.currentSeat : undefined;
  }

  /** An event: a turn that starts or resumes (after an outage) replaces the
   * deadline; the end of a round or of the game stops the clock. */
  see(event: TableEvent): void {
    const payload = event.payload;
    if (payload.case === "turnStarted" || payload.case === "turnResumed") {
      this.deadline = payload.value.deadline;
      this.seat = event.seat;
    } else if (event.kind === EventKind.ROUND_ENDED || event.kind === EventKind.GAME_ENDED) {
      this.deadline = undefined;
      this.seat = undefined;
    }
  }

  /** Milliseconds left in the turn; undefined when no turn is timed (or no
   * view was seen yet). */
  remainingMs(): number | undefined {
    return this.deadline === undefined ? undefined : this.clock.untilMs(this.deadline);
  }

  /** Whole seconds to show: rounded up, so 0 means the time is up. */
  seconds(): number | undefined {
    const left = this.remainingMs();
    return left === undefined ? undefined : Math.ceil(left / 1000);
  }
}
