// A retried action is applied once: its request id is made before the first
// attempt and sent again with every retry.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { EventKind, Phase, type Table, type TableEvent } from "../src/index.js";
import { AGAINST_A_BOT, control, latch, newClient, untilMyTurn } from "./helpers.js";

/** The request ids of every DrawStock sent, in order. */
const sent: string[] = [];
let loseNextReply = false;
/** Resolved by the next DrawStock that fails on the way (the server away). */
let failed = latch();

/** Lets a DrawStock through to the server, then loses its answer on the way
 * back, once: the move was applied, but the app could not know. */
const lossy: Interceptor = (next) => async (request) => {
  if (request.stream || request.method.name !== "DrawStock") {
    return next(request);
  }
  sent.push((request.message as unknown as { requestId: string }).requestId);
  let answer;
  try {
    answer = await next(request);
  } catch (error) {
    failed.resolve();
    throw error;
  }
  if (loseNextReply) {
    loseNextReply = false;
    throw new ConnectError("the connection dropped before the answer came", Code.Unavailable);
  }
  return answer;
};

const client = newClient("Retries", { gameInterceptors: [lossy] });
after(() => client.close());

/** The Drew events logged after seq `after`, up to seq `upTo`. */
async function drewEvents(table: Table, after: bigint, upTo: bigint): Promise<TableEvent[]> {
  const events: TableEvent[] = [];
  const watch = table.watch(after);
  for await (const item of watch) {
    if (item.kind === "event") {
      events.push(item.event);
      if (item.event.seq >= upTo) {
        break;
      }
    }
  }
  watch.close();
  return events.filter((event) => event.kind === EventKind.DREW);
}

test("a move whose answer was lost is sent again and applied once", async () => {
  await client.signIn();
  const table = client.tableOf(await client.quickMatch(AGAINST_A_BOT));
  const before = await untilMyTurn(table);
  assert.equal(before.phase, Phase.DRAW);

  sent.length = 0;
  loseNextReply = true;
  const drawn = await table.drawStock({ expectedVersion: before.version });

  assert.equal(sent.length, 2, "the draw was not sent again");
  assert.equal(sent[0], sent[1], "the retry carried another request id");
  // Applied once: one version more, one card more, one Drew event.
  assert.equal(drawn.version, before.version + 1n);
  assert.equal(drawn.view.hand.length, before.hand.length + 1);
  const now = await table.view();
  assert.equal(now.version, before.version + 1n);
  assert.equal(now.hand.length, before.hand.length + 1);
  const drew = await drewEvents(table, before.lastSeq, now.lastSeq);
  assert.equal(drew.length, 1);
  assert.equal(drew[0]?.version, drawn.version);
  await table.leave();
});

test("a move sent while the game server is down is applied once it is back", async () => {
  const table = client.tableOf(await client.quickMatch(AGAINST_A_BOT));
  const before = await untilMyTurn(table);

  sent.length = 0;
  failed = latch();
  await control("stop-game");
  const pending = table.drawStock({ expectedVersion: before.version });
  await failed.promise; // the first attempt found no server
  await control("start-game");
  const drawn = await pending;

  assert.ok(sent.length >= 2, "the draw was not sent again");
  assert.equal(new Set(sent).size, 1, "a retry carried another request id");
  assert.equal(drawn.version, before.version + 1n);
  const now = await table.view();
  assert.equal(now.version, before.version + 1n);
  assert.equal(now.hand.length, before.hand.length + 1);
  await table.leave();
});
