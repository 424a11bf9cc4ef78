// A refused move leaves the table as it was, and its error is typed by its
// ErrorInfo reason.

import assert from "node:assert/strict";
import { after, test } from "node:test";
import type { Interceptor } from "@connectrpc/connect";
import { Code, Phase, RummyError, type TableView } from "../src/index.js";
import { AGAINST_A_BOT, newClient, untilMyTurn } from "./helpers.js";

/** Calls of each game method sent to the server. */
const attempts = new Map<string, number>();
const counting: Interceptor = (next) => (request) => {
  attempts.set(request.method.name, (attempts.get(request.method.name) ?? 0) + 1);
  return next(request);
};

const client = newClient("Refusals", { gameInterceptors: [counting] });
after(() => client.close());

/** What a refused move must leave alone. */
function state(view: TableView): unknown {
  return {
    version: view.version,
    lastSeq: view.lastSeq,
    phase: view.phase,
    currentSeat: view.currentSeat,
    hand: view.hand.map((card) => card.id),
    discard: view.discardPile.map((card) => card.id),
    stock: view.stockSize,
    melds: view.melds.length,
  };
}

async function refusal(move: Promise<unknown>): Promise<RummyError> {
  try {
    await move;
  } catch (error) {
    assert.ok(error instanceof RummyError, `not a RummyError: ${String(error)}`);
    return error;
  }
  assert.fail("the move was accepted");
}

test("moves against the rules or on a stale view change nothing", async () => {
  await client.signIn();
  const table = client.tableOf(await client.quickMatch(AGAINST_A_BOT));
  const before = await untilMyTurn(table);
  assert.equal(before.phase, Phase.DRAW);
  const card = before.hand[0];
  assert.ok(card !== undefined);

  attempts.clear();
  const early = await refusal(table.discard(card.id, { expectedVersion: before.version }));
  assert.equal(early.code, Code.FailedPrecondition);
  assert.equal(early.reason, "MUST_DRAW_FIRST");
  assert.ok(early.is("MUST_DRAW_FIRST"));
  assert.equal(early.domain, "rummy.v1");
  assert.match(early.message, /draw/i, "the message is a sentence for the player");
  assert.equal(early.retryAfterMs, undefined, "a move against the rules is not worth retrying");
  assert.equal(attempts.get("Discard"), 1, "a refusal was sent again");
  assert.deepEqual(state(await table.view()), state(before));

  const stale = await refusal(table.drawStock({ expectedVersion: before.version - 1n }));
  assert.equal(stale.code, Code.Aborted);
  assert.equal(stale.reason, "VERSION_STALE");
  assert.ok(stale.stale);
  assert.deepEqual(state(await table.view()), state(before));

  const drawn = await table.drawStock({ expectedVersion: before.version });
  const twice = await refusal(table.drawStock({ expectedVersion: drawn.version }));
  assert.equal(twice.reason, "ALREADY_DREW");
  assert.deepEqual(state(await table.view()), state(drawn.view));

  await table.leave();
  const gone = await refusal(table.drawStock());
  assert.equal(gone.code, Code.FailedPrecondition);
  assert.ok(["SEAT_LEFT", "GAME_OVER"].includes(gone.reason), gone.reason);
});
