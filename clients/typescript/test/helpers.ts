// What the tests share: the servers' addresses (given by the test that starts
// them, tests/sdk/test_typescript_sdk.py), clients, and the control channel
// that restarts the game server on request.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { Interceptor } from "@connectrpc/connect";
import {
  EventKind,
  RummyClient,
  type ClientOptions,
  type EnqueueInit,
  type Table,
  type TableEvent,
  type TableView,
} from "../src/index.js";
import { nodeTransport, targetUrl } from "../src/node.js";
import { myTurn } from "../examples/bot.js";

function required(name: string): string {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: tests/sdk/test_typescript_sdk.py runs these tests`);
  return value;
}

/** The matchmaker (where players sign in and queue): "http://127.0.0.1:PORT". */
export const SERVER = (): string => required("RUMMY_SERVER");

/** Another replica of the game service than the one matches name ("host:port"). */
export const REPLICA = (): string => required("RUMMY_GAME_REPLICA");

/** Asks the test that started the servers to do something to them, and
 * waits until it is done: "restart-game", "stop-game", "start-game". */
export async function control(action: "restart-game" | "stop-game" | "start-game"): Promise<void> {
  const reply = await fetch(`${required("RUMMY_CONTROL")}/${action}`, { method: "POST" });
  assert.equal(reply.status, 200, `${action}: ${await reply.text()}`);
}

/** A quick match against one server bot, for a short game (24 turns). */
export const AGAINST_A_BOT: EnqueueInit = {
  tableSize: 2,
  ruleset: "cafe",
  fillWithBotsAfterMs: 100,
  options: { turnCap: 24 },
};

export interface TestClientOptions extends Partial<ClientOptions> {
  /** Around every call to the game service. */
  gameInterceptors?: Interceptor[];
}

/** A client for a new device, on these servers. */
export function newClient(name: string, options: TestClientOptions = {}): RummyClient {
  const { gameInterceptors, ...rest } = options;
  return new RummyClient({
    transport: nodeTransport(SERVER()),
    gameTransport: (target) => nodeTransport(targetUrl(target), { interceptors: gameInterceptors ?? [] }),
    deviceId: `sdk-test-${randomUUID()}`,
    displayName: name,
    ...rest,
  });
}

/** The table's view once it is the caller's turn (watching for it meanwhile). */
export async function untilMyTurn(table: Table): Promise<TableView> {
  let view = await table.view();
  if (myTurn(view)) {
    return view;
  }
  const watch = table.watch(view.lastSeq);
  try {
    for await (const item of watch) {
      if (item.kind === "event" && item.event.kind !== EventKind.TURN_STARTED) {
        continue;
      }
      view = await table.view();
      if (myTurn(view)) {
        return view;
      }
    }
  } finally {
    watch.close();
  }
  throw new Error("the game ended before the caller's turn");
}

/** Asserts `events` are exactly the seqs after `after`, in order, once each. */
export function assertContiguous(events: TableEvent[], after: bigint): void {
  const seqs = events.map((event) => event.seq);
  const expected = seqs.map((_, i) => after + BigInt(i) + 1n);
  assert.deepEqual(seqs, expected);
}

/** Every event of the table after `after`, read by a new watch to the end. */
export async function eventsAfter(table: Table, after: bigint): Promise<TableEvent[]> {
  const events: TableEvent[] = [];
  for await (const item of table.watch(after)) {
    assert.equal(item.kind, "event");
    if (item.kind === "event") {
      events.push(item.event);
    }
  }
  return events;
}

/** Seq and kind of each event: what two reads of one log must agree on. */
export function outline(events: TableEvent[]): string[] {
  return events.map((event) => `${event.seq}:${EventKind[event.kind]}`);
}

/** A promise and the function that resolves it. */
export function latch(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
