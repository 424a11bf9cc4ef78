// Browsers and React Native: gRPC-Web, through the edge's gRPC-Web path
// (deploy/README.md), since neither can speak gRPC over HTTP/2 itself.

import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";

export interface WebTransportOptions {
  interceptors?: Interceptor[];
  /** The fetch to use (the global one by default). React Native's fetch
   * cannot read a response as it streams, which `Watch` and `Enqueue` need:
   * pass one that can (a streaming fetch polyfill). */
  fetch?: typeof globalThis.fetch;
}

/** A gRPC-Web transport to `baseUrl` ("https://play.example.com"). */
export function webTransport(baseUrl: string, options: WebTransportOptions = {}): Transport {
  return createGrpcWebTransport({
    baseUrl,
    interceptors: options.interceptors ?? [],
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
}
