// One unary call with the session's token and the retry rules of retries.ts.

import type { DescMessage, DescMethodUnary, MessageShape } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { DEFAULT_RETRY, safeToRepeat, withRetries, type RetryOptions } from "./retries.js";
import type { Session } from "./session.js";

export class Calls {
  constructor(
    readonly session: Session,
    readonly retry: RetryOptions,
  ) {}

  /** Sends `request` (made once: a retry sends the very same message, request
   * id included) until it is answered or retrying cannot help. */
  async unary<I extends DescMessage, O extends DescMessage>(
    transport: Transport,
    method: DescMethodUnary<I, O>,
    request: MessageShape<I>,
    signal?: AbortSignal,
  ): Promise<MessageShape<O>> {
    const timeoutMs = this.retry.callTimeoutMs ?? DEFAULT_RETRY.callTimeoutMs;
    const attempt = async () => {
      const headers = this.session.headers();
      const reply = await transport.unary(method, signal, timeoutMs, headers, request);
      return reply.message;
    };
    const safe = safeToRepeat(method, request);
    return withRetries(attempt, { safe, session: this.session, options: this.retry, signal });
  }
}
