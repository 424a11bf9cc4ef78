// A whole game through the SDK, as the example bot plays it.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { EventKind, Phase } from "../src/index.js";
import { playGame } from "../examples/bot.js";
import { AGAINST_A_BOT, assertContiguous, eventsAfter, newClient, outline } from "./helpers.js";

const client = newClient("Whole game");
after(() => client.close());

test("a bot queues, plays a whole game and sees every event once", async () => {
  const me = await client.signIn();
  assert.match(me.playerId, /\S/);
  assert.ok(me.expiresAtMs > Date.now());

  const record = await playGame(client, AGAINST_A_BOT);

  assert.ok(record.turns > 0, "the bot played no turn");
  assert.deepEqual(record.refused.map(String), [], "a legal move was refused");
  assert.equal(record.last.phase, Phase.GAME_OVER);
  assert.ok(record.last.result !== undefined, "a finished game has its result");
  assert.equal(record.events.at(-1)?.kind, EventKind.GAME_ENDED);
  assertContiguous(record.events, record.first.lastSeq);
  assert.equal(record.last.lastSeq, record.events.at(-1)?.seq);
  assert.equal(record.watch.reconnects, 0);
  // What the bot saw is the table's log, read again from the same place.
  const again = await eventsAfter(record.table, record.first.lastSeq);
  assert.deepEqual(outline(again), outline(record.events));
});
