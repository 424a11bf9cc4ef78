// The SDK's rules on their own, without a server: error details, which calls
// are retried, the countdown, and a Watch fed duplicates and gaps.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createRouterTransport } from "@connectrpc/connect";
import {
  AuthService,
  DrawStockRequestSchema,
  EventKind,
  GameService,
  GetTableRequestSchema,
  MatchmakerService,
  Phase,
  PlayerService,
  RummyClient,
  RummyError,
  TableEventSchema,
  TableViewSchema,
  TurnCountdown,
  defaultRefreshDelay,
  tokenLifeMs,
  isKnownReason,
  repeatableMethods,
  safeToRepeat,
} from "../src/index.js";
import { Backoff, retryWait } from "../src/retries.js";

function errorInfo(reason: string, metadata: Record<string, string> = {}): Uint8Array {
  const writer = new BinaryWriter().tag(1, 2).string(reason).tag(2, 2).string("rummy.v1");
  for (const [key, value] of Object.entries(metadata)) {
    writer.tag(3, 2).fork().tag(1, 2).string(key).tag(2, 2).string(value).join();
  }
  return writer.finish();
}

function retryInfo(seconds: number, nanos: number): Uint8Array {
  return new BinaryWriter().tag(1, 2).fork().tag(1, 0).int64(seconds).tag(2, 0).int32(nanos).join().finish();
}

function refusal(code: Code, details: Record<string, Uint8Array>): RummyError {
  const error = new ConnectError("A sentence for the player.", code);
  error.details = Object.entries(details).map(([type, value]) => ({ type, value }));
  return new RummyError(error);
}

test("an error is typed by its ErrorInfo, and says the wait its RetryInfo asks", () => {
  const limited = refusal(Code.ResourceExhausted, {
    "google.rpc.ErrorInfo": errorInfo("RATE_LIMITED", { retry_after_ms: "250" }),
    "google.rpc.RetryInfo": retryInfo(1, 500_000_000),
  });
  assert.equal(limited.reason, "RATE_LIMITED");
  assert.equal(limited.domain, "rummy.v1");
  assert.deepEqual(limited.metadata, { retry_after_ms: "250" });
  assert.equal(limited.retryAfterMs, 1500, "RetryInfo comes first");
  assert.equal(limited.message, "A sentence for the player.");

  const older = refusal(Code.ResourceExhausted, {
    "google.rpc.ErrorInfo": errorInfo("SERVER_FULL", { retry_after_ms: "250" }),
  });
  assert.equal(older.retryAfterMs, 250);

  const bare = RummyError.from(new ConnectError("connection refused", Code.Unavailable));
  assert.equal(bare.reason, "");
  assert.equal(bare.retryAfterMs, undefined);
  assert.ok(isKnownReason("NOT_YOUR_TURN") && !isKnownReason("NOT_A_REASON"));
});

test("only calls that cannot apply twice are retried on an outage", () => {
  const outage = RummyError.from(new ConnectError("gone", Code.Unavailable));
  const backoff = new Backoff(100, 1000);
  const draw = GameService.method.drawStock;
  assert.ok(safeToRepeat(draw, create(DrawStockRequestSchema, { requestId: "r-1" })));
  assert.ok(!safeToRepeat(draw, create(DrawStockRequestSchema, {})), "an action without a request id");
  assert.ok(safeToRepeat(GameService.method.getTable, create(GetTableRequestSchema, {})));
  assert.ok(!safeToRepeat(MatchmakerService.method.cancel, {}));
  assert.ok(!safeToRepeat(AuthService.method.login, {}));
  assert.notEqual(retryWait(outage, true, backoff), undefined);
  assert.equal(retryWait(outage, false, backoff), undefined);
  const rules = refusal(Code.FailedPrecondition, { "google.rpc.ErrorInfo": errorInfo("NOT_YOUR_TURN") });
  assert.equal(retryWait(rules, true, backoff), undefined);
  const limited = refusal(Code.ResourceExhausted, {
    "google.rpc.ErrorInfo": errorInfo("RATE_LIMITED", { retry_after_ms: "300" }),
  });
  const wait = retryWait(limited, false, backoff);
  assert.ok(wait !== undefined && wait >= 300, "turned away at the door: any call waits and goes again");
});

test("the calls retried are those the API's service config retries", () => {
  const config = JSON.parse(
    readFileSync(new URL("../../../../proto/service_config.json", import.meta.url), "utf8"),
  ) as { methodConfig: { name: { service: string; method: string }[] }[] };
  const published = config.methodConfig.flatMap((entry) =>
    entry.name.map((name) => `${name.service}/${name.method}`),
  );
  const services = [AuthService, GameService, MatchmakerService, PlayerService];
  const ours = repeatableMethods(services);
  assert.deepEqual([...ours].sort(), [...published].sort());
});

test("the countdown runs on the server's clock, whatever the local one says", (t) => {
  let now = 500;
  t.mock.method(Date, "now", () => 0); // a phone clock decades off
  const view = create(TableViewSchema, {
    phase: Phase.DRAW,
    currentSeat: 1,
    serverTime: timestampFromMs(1_000_000),
    turnDeadline: timestampFromMs(1_045_000),
  });
  const countdown = TurnCountdown.fromView(view, () => now);
  assert.equal(countdown.remainingMs(), 45_000);
  assert.equal(countdown.seat, 1);
  now += 10_400;
  assert.equal(countdown.seconds(), 35, "whole seconds, rounded up");
  const started = create(TableEventSchema, {
    kind: EventKind.TURN_STARTED,
    seat: 0,
    payload: { case: "turnStarted", value: { turn: 2, deadline: timestampFromMs(1_050_400) } },
  });
  countdown.see(started);
  assert.equal(countdown.remainingMs(), 40_000);
  assert.equal(countdown.seat, 0);
  now += 60_000;
  assert.equal(countdown.remainingMs(), 0, "never below zero");
  countdown.update(create(TableViewSchema, { ...view, phase: Phase.GAME_OVER }));
  assert.equal(countdown.remainingMs(), undefined);
});

test("a token is renewed at four fifths of its life as its own times say", () => {
  assert.equal(defaultRefreshDelay(100_000), 80_000);
  assert.equal(defaultRefreshDelay(500), 1_000);
  assert.equal(defaultRefreshDelay(-5_000), 1_000);
  const claims = btoa(JSON.stringify({ sub: "p-1", iat: 1_000, exp: 1_000 + 86_400 })).replace(/=+$/, "");
  assert.equal(tokenLifeMs(`eyJhbGciOiJIUzI1NiJ9.${claims}.c2ln`), 86_400_000, "a JWT's own times");
  assert.equal(tokenLifeMs("opaque-token"), undefined);
});

test("a watch delivers each seq once, in order, across duplicates, gaps and drops", async () => {
  const asked: bigint[] = [];
  const event = (seq: number, kind = EventKind.DREW) => ({ event: { seq: BigInt(seq), kind } });
  const transport = createRouterTransport(({ service }) => {
    service(GameService, {
      async *watch(request) {
        asked.push(request.afterSeq);
        if (asked.length === 1) {
          yield* [event(1), event(2), event(3)];
          throw new ConnectError("the server went away", Code.Unavailable);
        }
        if (asked.length === 2) {
          yield* [event(3), event(4), event(6), event(7)]; // a repeat, then a gap
          return;
        }
        yield* [event(4), event(5), event(6), event(7, EventKind.GAME_ENDED)];
      },
    });
  });
  const told: string[] = [];
  const client = new RummyClient({
    transport,
    deviceId: "device-units",
    displayName: "Units",
    retry: { firstBackoffMs: 1, maxBackoffMs: 1, onConnection: (state) => told.push(state) },
  });
  const watch = client.table("t-1").watch(0n);
  const seqs: bigint[] = [];
  for await (const item of watch) {
    assert.equal(item.kind, "event");
    if (item.kind === "event") {
      seqs.push(item.event.seq);
    }
  }
  assert.deepEqual(seqs, [1n, 2n, 3n, 4n, 5n, 6n, 7n]);
  assert.deepEqual(asked, [0n, 3n, 4n]);
  assert.equal(watch.reconnects, 2);
  assert.deepEqual(told, ["lost", "back", "lost", "back"], "each stream delivered before it broke");
  assert.equal(watch.lastSeq, 7n);
});
