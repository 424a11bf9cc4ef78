// The entry point: a signed-in player's calls to the matchmaker and the game.

import { create } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { Calls } from "./calls.js";
import { CancelRequestSchema, MatchmakerService, type Ticket } from "./gen/rummy/v1/matchmaker_pb.js";
import { queue, ticketNow, type EnqueueInit, type QueueOptions, type Seated } from "./matchmaking.js";
import type { RetryOptions } from "./retries.js";
import { Session, type Credentials, type SessionOptions } from "./session.js";
import { Table } from "./table.js";

interface Closable {
  close(): void;
}

export interface ClientOptions extends SessionOptions {
  /** Where the player signs in and queues (`AuthService`,
   * `MatchmakerService`); behind the edge, every service. Make one with
   * `nodeTransport` (`@rummy/client/node`) or `webTransport` (`@rummy/client/web`). */
  transport: Transport;
  /** The transport for a game service a match names by its "host:port"
   * (`Match.game_target`). Without it every table is played through
   * `transport` (behind the edge the one address serves every service). */
  gameTransport?: (target: string) => Transport;
  retry?: RetryOptions;
}

export class RummyClient {
  readonly session: Session;
  private readonly calls: Calls;
  private readonly games = new Map<string, Transport>();

  constructor(private readonly options: ClientOptions) {
    this.session = new Session(options.transport, options);
    this.calls = new Calls(this.session, options.retry ?? {});
  }

  /** The signed-in player's id ("" before `signIn`). */
  get playerId(): string {
    return this.session.playerId;
  }

  /** Signs the device in; the token is then renewed by itself. */
  signIn(): Promise<Credentials> {
    return this.session.signIn();
  }

  /** Goes on with kept credentials instead of signing in (see `Session.resume`). */
  resume(credentials: Credentials): void {
    this.session.resume(credentials);
  }

  /** Queues for a table (`Enqueue`) and waits until the player is seated. */
  quickMatch(request: EnqueueInit, options?: QueueOptions): Promise<Seated> {
    return queue(this.calls, this.options.transport, request, options);
  }

  /** A ticket's state now, for example after the app restarted. */
  ticket(ticketId: string, signal?: AbortSignal): Promise<Ticket> {
    return ticketNow(this.calls, this.options.transport, ticketId, signal);
  }

  /** Cancels a ticket (not retried on an outage: say so, and ask again). */
  async cancel(ticketId: string): Promise<Ticket | undefined> {
    const request = create(CancelRequestSchema, { ticketId });
    const reply = await this.calls.unary(this.options.transport, MatchmakerService.method.cancel, request);
    return reply.ticket;
  }

  /** A table, served by the game service at `gameTarget` (a match's, or ""). */
  table(tableId: string, gameTarget = ""): Table {
    return new Table(this.calls, this.gameTransport(gameTarget), tableId);
  }

  /** The table a match seated the player at. */
  tableOf(seated: Seated): Table {
    return this.table(seated.tableId, seated.gameTarget);
  }

  /** Stops renewing the token, and closes the transports that can be closed
   * (`nodeTransport`'s): those given, and those made by `gameTransport`. */
  close(): void {
    this.session.close();
    for (const transport of [this.options.transport, ...this.games.values()]) {
      (transport as Partial<Closable>).close?.();
    }
    this.games.clear();
  }

  private gameTransport(target: string): Transport {
    const make = this.options.gameTransport;
    if (target === "" || make === undefined) {
      return this.options.transport;
    }
    let transport = this.games.get(target);
    if (transport === undefined) {
      transport = make(target);
      this.games.set(target, transport);
    }
    return transport;
  }
}
