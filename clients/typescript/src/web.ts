// Browsers and React Native: gRPC-Web, through the edge's gRPC-Web path
// (deploy/README.md), since neither can speak gRPC over HTTP/2 itself.

import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";

/** A gRPC-Web transport to `baseUrl` ("https://play.example.com"). */
export function webTransport(baseUrl: string, options: { interceptors?: Interceptor[] } = {}): Transport {
  return createGrpcWebTransport({ baseUrl, interceptors: options.interceptors ?? [] });
}
