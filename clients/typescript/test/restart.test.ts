// A Watch that survives a restart of the game server in the middle of a game:
// the stream is cut, the SDK reopens it from the last seq once the (new)
// server answers, and the game goes on with no event lost or repeated.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import { EventKind, Phase, type RummyError } from "../src/index.js";
import { playGame } from "../examples/bot.js";
import {
  AGAINST_A_BOT,
  REPLICA,
  assertContiguous,
  control,
  eventsAfter,
  newClient,
  outline,
} from "./helpers.js";

const told: string[] = [];
const client = newClient("Restart", {
  retry: {
    onConnection: (state: "lost" | "back", error?: RummyError) =>
      told.push(error ? `${state} ${error.code}` : state),
  },
});
after(() => client.close());

test("the game goes on across a restart of the game server", async () => {
  await client.signIn();
  let restarted = false;
  let viewDuringOutage: bigint | undefined;

  const record = await playGame(client, AGAINST_A_BOT, {
    afterTurn: async (turn, view, table) => {
      if (turn !== 2) {
        return;
      }
      // The server goes away with the table's stream open; a read made
      // meanwhile waits for it (retried), then the stream resumes.
      await control("stop-game");
      const pending = table.view();
      await control("start-game");
      viewDuringOutage = (await pending).version;
      assert.ok(viewDuringOutage >= view.version);
      restarted = true;
    },
  });

  assert.ok(restarted, "the game ended before the restart");
  assert.ok(record.watch.reconnects >= 1, "the stream was never cut");
  assert.ok(told.includes("back"), `told: ${told.join(", ")}`);
  assert.equal(record.last.phase, Phase.GAME_OVER);
  assert.equal(record.events.at(-1)?.kind, EventKind.GAME_ENDED);
  assertContiguous(record.events, record.first.lastSeq);
  assert.deepEqual(record.refused.map(String), []);
  const again = await eventsAfter(record.table, record.first.lastSeq);
  assert.deepEqual(outline(again), outline(record.events));
  // Any replica serves the same log from any seq.
  const middle = record.events[Math.floor(record.events.length / 2)]?.seq ?? 0n;
  const elsewhere = await eventsAfter(client.table(record.table.tableId, REPLICA()), middle);
  assert.deepEqual(outline(elsewhere), outline(record.events.filter((event) => event.seq > middle)));
});
