// The gRPC-Web transport (browsers, React Native) speaks gRPC-Web as an edge
// serves it: here a Connect server on this machine serving the game service's
// methods over HTTP/1.1 in gRPC-Web, as the edge's gRPC-Web path does.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { EventKind, GameService, RummyClient, RummyError } from "../src/index.js";
import { webTransport } from "../src/web.js";

test("a client over gRPC-Web reads a view, follows a Watch, and gets refusals", async (t) => {
  const handler = connectNodeAdapter({
    grpcWeb: true,
    connect: false,
    grpc: false,
    routes: ({ service }) => {
      service(GameService, {
        getTable: (request) => ({ view: { tableId: request.tableId, version: 7n, lastSeq: 2n } }),
        async *watch(request) {
          for (let seq = request.afterSeq + 1n; seq <= 4n; seq++) {
            yield { event: { seq, kind: seq === 4n ? EventKind.GAME_ENDED : EventKind.DREW } };
          }
        },
        discard: () => {
          throw new ConnectError("It is not your turn.", Code.FailedPrecondition);
        },
      });
    },
  });
  const server = createServer(handler);
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;

  const client = new RummyClient({
    transport: webTransport(`http://127.0.0.1:${port}`),
    deviceId: "device-web-test",
    displayName: "Web",
  });
  const table = client.table("t-web");
  const view = await table.view();
  assert.equal(view.tableId, "t-web");
  assert.equal(view.version, 7n);
  const seqs: bigint[] = [];
  for await (const item of table.watch(view.lastSeq)) {
    if (item.kind === "event") {
      seqs.push(item.event.seq);
    }
  }
  assert.deepEqual(seqs, [3n, 4n]);
  await assert.rejects(table.discard(1), (error: unknown) => {
    assert.ok(error instanceof RummyError);
    assert.equal(error.code, Code.FailedPrecondition);
    assert.equal(error.message, "It is not your turn.");
    return true;
  });
});
