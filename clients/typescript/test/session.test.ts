// Signing in, renewing the token before it expires, and signing in again
// when a server refuses the token.

import assert from "node:assert/strict";
import { test } from "node:test";
import { Code, RummyError, type Credentials } from "../src/index.js";
import { latch, newClient } from "./helpers.js";

test("the token is renewed before it expires, on the session's schedule", async () => {
  const renewed: Credentials[] = [];
  const twice = latch();
  const asked: number[] = [];
  const client = newClient("Refresh", {
    refreshDelay: (lifeMs) => {
      asked.push(lifeMs);
      return 20;
    },
    onCredentials: (credentials) => {
      renewed.push(credentials);
      if (renewed.length === 3) {
        twice.resolve();
      }
    },
  });
  // The renewal's timer alone does not keep Node running (it is unref'd, as
  // it must be in an app): this one does, while the test waits for it.
  const alive = setInterval(() => undefined, 1_000);
  try {
    const first = await client.signIn();
    await twice.promise; // the sign-in, then two refreshes
    // A fresh token's whole life, as the server counts it.
    const life = Number(process.env["RUMMY_TOKEN_LIFE_S"]) * 1000;
    assert.ok(life > 0 && asked.every((left) => left === life), `lives: ${asked.join(", ")}`);
    for (const credentials of renewed) {
      assert.equal(credentials.playerId, first.playerId);
      assert.ok(credentials.expiresAtMs >= first.expiresAtMs);
    }
    // The renewed token is the one calls use.
    const ticket = await refusal(client.ticket("00000000-0000-4000-8000-000000000000"));
    assert.equal(ticket.reason, "TICKET_NOT_FOUND");
  } finally {
    clearInterval(alive);
    client.close();
  }
});

test("a refused token is replaced by a new sign-in, and the call made again", async () => {
  const signedIn: Credentials[] = [];
  const client = newClient("Resume", { onCredentials: (credentials) => signedIn.push(credentials) });
  try {
    client.resume({ token: "not-a-token", playerId: "p-kept", expiresAtMs: Date.now() + 3_600_000 });
    const error = await refusal(client.ticket("00000000-0000-4000-8000-000000000000"));
    // Signed in again (once), then the same call answered past the token check.
    assert.equal(error.reason, "TICKET_NOT_FOUND");
    assert.equal(error.code, Code.NotFound);
    assert.equal(signedIn.length, 1);
    assert.notEqual(client.session.token, "not-a-token");
    assert.equal(client.playerId, signedIn[0]?.playerId);
  } finally {
    client.close();
  }
});

test("a sign-in refused is a typed error", async () => {
  const client = newClient("Bad device", { deviceId: "short" });
  try {
    const error = await refusal(client.signIn());
    assert.equal(error.code, Code.InvalidArgument);
    assert.equal(error.reason, "DEVICE_ID_INVALID");
  } finally {
    client.close();
  }
});

async function refusal(call: Promise<unknown>): Promise<RummyError> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof RummyError, `not a RummyError: ${String(error)}`);
    return error;
  }
  assert.fail("the call was answered");
}
