// Signing in, and keeping the token fresh.
//
// The device is the identity: `Login` with a device id (kept by the app, say a
// UUID in the keychain) always gives the same player. The token is renewed
// with `Refresh` at four fifths of its life (its life as the server counts it,
// from the token's own issue and expiry times, so a phone clock that is off
// changes nothing), and wherever a server refuses it
// (TOKEN_EXPIRED; TOKEN_INVALID when the servers changed their signing secret)
// the session signs in again with the device id: once for every call refused
// with that token at the same time.

import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, type Transport } from "@connectrpc/connect";
import { RummyError } from "./errors.js";
import { AuthService, LoginRequestSchema, RefreshRequestSchema } from "./gen/rummy/v1/auth_pb.js";
import type { LoginResponse, RefreshResponse } from "./gen/rummy/v1/auth_pb.js";
import { DEFAULT_RETRY, isRateLimited, sleep, type Renewer } from "./retries.js";

/** What a sign-in gives; keep it to resume without a new sign-in. */
export interface Credentials {
  token: string;
  playerId: string;
  /** When the token expires (ms since the epoch, the server's clock). */
  expiresAtMs: number;
}

export interface SessionOptions {
  /** 8 to 128 visible ASCII characters, the same on every launch. */
  deviceId: string;
  /** 1 to 32 characters, shown to the other players. */
  displayName: string;
  /** How long to wait before renewing a token that has `lifeMs` left
   * (default: four fifths of it, at least a second). */
  refreshDelay?: (lifeMs: number) => number;
  /** Told of every new token (a sign-in or a refresh): store it if you like. */
  onCredentials?: (credentials: Credentials) => void;
  callTimeoutMs?: number;
}

/** Four fifths of the time left, at least a second. */
export function defaultRefreshDelay(lifeMs: number): number {
  return Math.max(1_000, lifeMs * 0.8);
}

/** A new token's life, as the server counts it: from its `iat` to its `exp`
 * (the tokens are JWTs); undefined for a token that says neither. */
export function tokenLifeMs(token: string): number | undefined {
  const payload = token.split(".")[1];
  if (payload === undefined) {
    return undefined;
  }
  try {
    const base64 = payload.replace(/-/g, "+").replace(/_/g, "/");
    const claims = JSON.parse(atob(base64)) as { iat?: unknown; exp?: unknown };
    if (typeof claims.iat === "number" && typeof claims.exp === "number") {
      return (claims.exp - claims.iat) * 1000;
    }
  } catch {
    // Not a JWT: the caller falls back on the expiry and the local clock.
  }
  return undefined;
}

/** A refresh that did not get through is tried again this soon. */
const REFRESH_RETRY_MS = 5_000;

export class Session implements Renewer {
  private credentials: Credentials | undefined;
  private signingIn: Promise<void> | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(
    private readonly transport: Transport,
    private readonly options: SessionOptions,
  ) {}

  /** The bearer token ("" before the first sign-in). */
  get token(): string {
    return this.credentials?.token ?? "";
  }

  get playerId(): string {
    return this.credentials?.playerId ?? "";
  }

  get expiresAtMs(): number {
    return this.credentials?.expiresAtMs ?? 0;
  }

  /** The header every call but Login sends. */
  headers(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }

  /** Signs the device in (Login) and starts renewing the token. A call turned
   * away for its rate is made again after the wait the server names; an
   * outage is thrown at once, so the app can say the server is out of reach. */
  async signIn(): Promise<Credentials> {
    const request = create(LoginRequestSchema, {
      deviceId: this.options.deviceId,
      displayName: this.options.displayName,
    });
    for (;;) {
      try {
        const reply = await this.transport.unary(
          AuthService.method.login,
          undefined,
          this.options.callTimeoutMs ?? DEFAULT_RETRY.callTimeoutMs,
          undefined,
          request,
        );
        return this.adopt(reply.message);
      } catch (thrown) {
        const error = RummyError.from(thrown);
        if (!isRateLimited(error)) {
          throw error;
        }
        await sleep(error.retryAfterMs ?? 50);
      }
    }
  }

  /** Goes on with credentials kept from before (no call is made): a token
   * that turns out to be refused is replaced by a new sign-in. */
  resume(credentials: Credentials): void {
    this.credentials = { ...credentials };
    // A kept token's life left can only be told by this device's clock.
    this.schedule(credentials.expiresAtMs - Date.now());
  }

  /** Signs in afresh, `stale` having been refused: once for all the calls
   * refused with it together, and not at all if a newer token came meanwhile. */
  async signInAgain(stale: string): Promise<void> {
    if (this.token !== stale && this.token !== "") {
      return;
    }
    if (this.signingIn === undefined) {
      this.signingIn = this.signIn()
        .then(() => undefined)
        .finally(() => {
          this.signingIn = undefined;
        });
    }
    await this.signingIn;
  }

  /** Exchanges the token for a fresh one now (the session does it by itself
   * before expiry). A token refused meanwhile is replaced by a new sign-in. */
  async refresh(): Promise<Credentials> {
    const used = this.token;
    try {
      const reply = await this.transport.unary(
        AuthService.method.refresh,
        undefined,
        this.options.callTimeoutMs ?? DEFAULT_RETRY.callTimeoutMs,
        this.headers(),
        create(RefreshRequestSchema, { token: used }),
      );
      if (this.token === used) {
        // (Not replaced by a sign-in meanwhile.)
        return this.adopt(reply.message);
      }
    } catch (thrown) {
      const error = RummyError.from(thrown);
      if (error.code !== Code.Unauthenticated) {
        throw error;
      }
      await this.signInAgain(used);
    }
    return this.current();
  }

  /** Stops renewing the token. */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private current(): Credentials {
    if (this.credentials === undefined) {
      throw new Error("not signed in");
    }
    return { ...this.credentials };
  }

  private adopt(reply: LoginResponse | RefreshResponse): Credentials {
    const expiresAtMs = reply.expiresAt ? timestampMs(reply.expiresAt) : Date.now() + 3_600_000;
    this.credentials = { token: reply.token, playerId: reply.playerId, expiresAtMs };
    this.options.onCredentials?.(this.current());
    this.schedule(tokenLifeMs(reply.token) ?? expiresAtMs - Date.now());
    return this.current();
  }

  /** Renews the token once it has used most of `lifeMs` (its life left now). */
  private schedule(lifeMs: number): void {
    this.wake((this.options.refreshDelay ?? defaultRefreshDelay)(lifeMs));
  }

  private wake(delay: number): void {
    if (this.closed) {
      return;
    }
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // A refresh that did not get through (the server away) is tried again sooner.
      this.refresh().catch(() => this.wake(Math.min(REFRESH_RETRY_MS, delay)));
    }, delay);
    // The renewal alone does not keep a Node process running.
    (this.timer as { unref?: () => void }).unref?.();
  }
}
