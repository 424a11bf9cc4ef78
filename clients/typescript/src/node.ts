// Node: gRPC over HTTP/2 (plaintext to a server on this machine, TLS to a
// public address).

import type { Interceptor, Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";

export interface NodeTransportOptions {
  /** Called around every call (logging, metrics, tests). */
  interceptors?: Interceptor[];
  /** A quiet connection is pinged this often while a call (a Watch) is
   * open, and dropped if the server does not answer within `pingTimeoutMs`:
   * a connection the network lost without a word is noticed and replaced
   * (20 s and 10 s; servers take pings 10 s apart or more). */
  pingIntervalMs?: number;
  pingTimeoutMs?: number;
}

/** A transport over one HTTP/2 connection (made again whenever it is lost). */
export interface NodeTransport extends Transport {
  /** Closes the connection (its open calls fail). */
  close(): void;
}

/** A transport to `baseUrl` ("http://127.0.0.1:50052", "https://play.example.com"). */
export function nodeTransport(baseUrl: string, options: NodeTransportOptions = {}): NodeTransport {
  const sessionManager = new Http2SessionManager(baseUrl, {
    pingIntervalMs: options.pingIntervalMs ?? 20_000,
    pingTimeoutMs: options.pingTimeoutMs ?? 10_000,
  });
  const transport = createGrpcTransport({
    baseUrl,
    interceptors: options.interceptors ?? [],
    sessionManager,
  });
  return {
    unary: (...args) => transport.unary(...args),
    stream: (...args) => transport.stream(...args),
    close: () => sessionManager.abort(),
  };
}

/** The URL of a "host:port" gRPC target (a match's `gameTarget`). */
export function targetUrl(target: string, tls = false): string {
  return `${tls ? "https" : "http"}://${target}`;
}
